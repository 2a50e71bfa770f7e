#!/bin/sh
# Linker wrapper (see .cargo/config.toml): runs the C compiler driver as rustc would, but first
# trims the export list rustc writes for the addon's cdylib to the napi entry points (`napi_*`,
# `node_api_*`), so the `v8` crate's `extern "C"` glue (`v8__*`, `crdtp__*`, `temporal_rs_*`, …)
# stays local to the `.node`. Two forms of that list:
# - ELF (Linux gnu and musl): `-Wl,--version-script=<dir>/list`, a version script whose `global:`
#   lines are kept only for napi's names;
# - Mach-O (macOS): `-Wl,-exported_symbols_list,<dir>/list`, one `_name` a line, kept only for
#   `_napi_*` and `_node_api_*`.
# Executables (tests) have no such list, and other shared objects (proc-macro crates) are left
# alone. WORKERBOX_CC names the driver (default `cc`; a cross compiler when cross-building).
output=""
prev=""
for arg in "$@"; do
  [ "$prev" = "-o" ] && output="$arg"
  prev="$arg"
done
case "$output" in
  */libworkerbox.so | */libworkerbox.dylib) ;;
  *) exec "${WORKERBOX_CC:-cc}" "$@" ;;
esac
trim_macho() {
  if [ -f "$1" ]; then
    grep -E '^_(napi_|node_api_)[A-Za-z0-9_]*$' "$1" > "$1.napi"
    mv "$1.napi" "$1"
  fi
}
prev=""
for arg in "$@"; do
  # rustc passes the Mach-O list as one argument or as two (`-Wl,-exported_symbols_list`
  # `-Wl,<path>`), by version.
  [ "$prev" = "-Wl,-exported_symbols_list" ] && trim_macho "${arg#-Wl,}"
  prev="$arg"
  case "$arg" in
    -Wl,--version-script=*/list)
      list="${arg#-Wl,--version-script=}"
      if [ -f "$list" ]; then
        {
          echo "{"
          echo "  global:"
          grep -E '^[[:space:]]+(napi_|node_api_)[A-Za-z0-9_]*;$' "$list"
          echo "  local:"
          echo "    *;"
          echo "};"
        } > "$list.napi" && mv "$list.napi" "$list"
      fi
      ;;
    -Wl,-exported_symbols_list,*) trim_macho "${arg#-Wl,-exported_symbols_list,}" ;;
  esac
done
exec "${WORKERBOX_CC:-cc}" "$@"
