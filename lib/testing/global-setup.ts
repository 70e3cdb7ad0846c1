import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres, portIsFree, type EmbeddedDatabase } from "../db/embedded";
import { migrateDatabase } from "../db/migrate";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of a database on the test server we may create databases from (admin rights). */
    pgAdminUrl: string;
    /** Name of the migrated template every test file clones. */
    pgTemplate: string;
  }
}

let embedded: EmbeddedDatabase | undefined;
let adminUrl = "";
let template = "";

async function freePort(from: number): Promise<number> {
  for (let p = from; p < from + 200; p++) if (await portIsFree(p)) return p;
  throw new Error("no free port for the test database");
}

/**
 * One PostgreSQL for the whole run: DATABASE_URL's server when set, else an embedded throwaway
 * cluster. Migrations are applied once to a template; each test file clones it (lib/testing/db.ts).
 */
export async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotkeeper-test-"));
    fs.chmodSync(dir, 0o755); // as root, the server runs as `postgres` and must reach it
    embedded = await startEmbeddedPostgres({ dir, port: await freePort(55432), database: "postgres", ephemeral: true });
    adminUrl = embedded.url;
  }
  template = `sk_tpl_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${template}`;
  await migrateDatabase(u.toString());
  project.provide("pgAdminUrl", adminUrl);
  project.provide("pgTemplate", template);
}

export async function teardown() {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect().catch(() => {});
  const { rows } = await admin
    .query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2", [template, `${template}_%`])
    .catch(() => ({ rows: [] as { datname: string }[] }));
  for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
  await admin.end().catch(() => {});
  await embedded?.stop();
  if (embedded) fs.rmSync(path.dirname(embedded.dataDir), { recursive: true, force: true });
}
