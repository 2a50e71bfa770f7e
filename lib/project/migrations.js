"use strict";
// Local D1 migrations of a project, as `wrangler d1 migrations list|apply --local` has them: the
// `.sql` files of a database's `migrations_dir` (default `migrations/`), in name order, checked
// against its migrations table (`d1_migrations` unless `migrations_table` says otherwise) in the
// project's local database (wrangler's own file under `.wrangler/state/v3`) — the same table wrangler keeps, so either
// tool sees what the other applied. `workerbox d1 migrations …` (bin/workerbox.js) prints these.

const fs = require("node:fs");
const { loadProject } = require("./load.js");

/** The database `name` (binding name or database_name) of the project in `target`, opened locally. */
async function openDatabase(target, name, { env, persistTo } = {}) {
  const project = await loadProject(target, { env, persistTo, build: false, migrate: false });
  const entries = project.config.bindings.d1;
  const entry = entries.find((e) => e.binding === name) ?? entries.find((e) => e.databaseName === name);
  if (entry === undefined) {
    const known = entries.map((e) => (e.databaseName !== e.binding ? `${e.binding} (${e.databaseName})` : e.binding));
    throw new Error(`${project.configFile}: d1_databases has no database bound or named "${name}"${known.length ? ` (it has: ${known.join(", ")})` : " (it has none)"}`);
  }
  return { project, entry, binding: project.bindings[entry.binding] };
}

/** The names recorded in the database's migrations table (none when it does not exist yet). */
async function appliedNames(db, table) {
  const exists = await db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").bind(table).first();
  if (exists === null) return new Set();
  const { results } = await db.prepare(`SELECT name FROM "${table.replaceAll('"', '""')}" ORDER BY id`).all();
  return new Set(results.map((row) => row.name));
}

/**
 * `{ database, binding, dir, table, applied: [names], pending: [names] }` for database `name` of
 * the project in `target`.
 */
async function listMigrations(target, name, options = {}) {
  const api = require("../api.js");
  const { entry, binding } = await openDatabase(target, name, options);
  const files = fs.existsSync(entry.migrationsDir) ? await api.readD1Migrations(entry.migrationsDir) : [];
  const applied = await appliedNames(binding.database(), entry.migrationsTable);
  return {
    database: entry.databaseName,
    binding: entry.binding,
    dir: entry.migrationsDir,
    table: entry.migrationsTable,
    applied: files.filter((m) => applied.has(m.name)).map((m) => m.name),
    pending: files.filter((m) => !applied.has(m.name)).map((m) => m.name),
  };
}

/** Applies the pending migrations of database `name`; resolves to `{ …listMigrations, appliedNow }`. */
async function applyMigrations(target, name, options = {}) {
  const api = require("../api.js");
  const { entry, binding } = await openDatabase(target, name, options);
  if (!fs.existsSync(entry.migrationsDir)) throw new Error(`d1_databases: ${entry.binding}: the migrations folder ${entry.migrationsDir} does not exist`);
  const appliedNow = await api.applyD1Migrations(binding, await api.readD1Migrations(entry.migrationsDir), entry.migrationsTable);
  return { ...(await listMigrations(target, name, options)), appliedNow };
}

module.exports = { listMigrations, applyMigrations };
