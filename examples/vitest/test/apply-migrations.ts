// Runs before each test file, inside its isolate: its D1 database starts with every migration.
import { applyD1Migrations, env } from "cloudflare:test";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
