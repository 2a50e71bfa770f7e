// node:sqlite (enable_nodejs_sqlite_module; implied by nodejs_compat from 2026-01-29): as in
// workerd, only the shape — DatabaseSync and StatementSync cannot be constructed ("Illegal
// constructor"), backup() fails — and SQLite's constants.

function illegal(name) {
  return { [name]: class { constructor() { throw new TypeError("Illegal constructor"); } } }[name];
}

const changeset = { SQLITE_CHANGESET_OMIT: 0, SQLITE_CHANGESET_REPLACE: 1, SQLITE_CHANGESET_ABORT: 2, SQLITE_CHANGESET_DATA: 1,
  SQLITE_CHANGESET_NOTFOUND: 2, SQLITE_CHANGESET_CONFLICT: 3, SQLITE_CHANGESET_CONSTRAINT: 4, SQLITE_CHANGESET_FOREIGN_KEY: 5 };
const actions = ["CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE", "CREATE_TEMP_TRIGGER", "CREATE_TEMP_VIEW",
  "CREATE_TRIGGER", "CREATE_VIEW", "DELETE", "DROP_INDEX", "DROP_TABLE", "DROP_TEMP_INDEX", "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER",
  "DROP_TEMP_VIEW", "DROP_TRIGGER", "DROP_VIEW", "INSERT", "PRAGMA", "READ", "SELECT", "TRANSACTION", "UPDATE", "ATTACH", "DETACH",
  "ALTER_TABLE", "REINDEX", "ANALYZE", "CREATE_VTABLE", "DROP_VTABLE", "FUNCTION", "SAVEPOINT"];
const constants = { SQLITE_OK: 0, SQLITE_DENY: 1, SQLITE_IGNORE: 2, ...changeset, SQLITE_COPY: 0, SQLITE_RECURSIVE: 33 };
actions.forEach((name, i) => { constants[`SQLITE_${name}`] = i + 1; });

module.exports = {
  DatabaseSync: illegal("DatabaseSync"),
  StatementSync: illegal("StatementSync"),
  backup() { throw new Error("backup is not implemented"); },
  constants: Object.freeze(constants),
};
