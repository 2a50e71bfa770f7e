#!/bin/sh
# Linker wrapper (see .cargo/config.toml): runs the system C compiler driver as rustc would,
# but first trims the export list rustc writes for a cdylib (`-Wl,--version-script=<dir>/list`)
# to the napi entry points (`napi_*`, `node_api_*`), so the `v8` crate's `extern "C"` glue
# (`v8__*`, `crdtp__*`, `temporal_rs_*`, …) stays local to the `.node`. Executables (tests)
# have no such list, and other shared objects (proc-macro crates) are left alone.
output=""
prev=""
for arg in "$@"; do
  [ "$prev" = "-o" ] && output="$arg"
  prev="$arg"
done
case "$output" in
  */libworkerbox.so) ;;
  *) exec "${WORKERBOX_CC:-cc}" "$@" ;;
esac
for arg in "$@"; do
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
  esac
done
exec "${WORKERBOX_CC:-cc}" "$@"
