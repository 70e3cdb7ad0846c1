import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, inject } from "vitest";
import { createDb, createPool, type Db } from "../db/client";
import { setClock } from "./clock";
import { killWorkers, liveWorkers } from "./spawn";

/** A database of its own for one test file, cloned from the migrated template. */
export type TestDatabase = { url: string; name: string; pool: pg.Pool; db: Db; drop: () => Promise<void> };

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Create a fresh database: a clone of the migrated template, or with `template: "empty"` a
 * database with nothing in it (for tests that migrate it themselves). Files run in parallel, each
 * on its own database, so concurrency tests can open as many real connections as they need.
 */
export async function createTestDatabase(opts: { poolSize?: number; template?: "migrated" | "empty" } = {}): Promise<TestDatabase> {
  const template = inject("pgTemplate");
  const name = `${template}_${randomBytes(4).toString("hex")}`;
  await admin((c) => c.query(opts.template === "empty" ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${template}`));
  const url = withDatabase(inject("pgAdminUrl"), name);
  const pool = createPool(url, { max: opts.poolSize ?? 10, applicationName: "slotkeeper:test" });
  return {
    url,
    name,
    pool,
    db: createDb(pool),
    drop: async () => {
      await pool.end();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** The URL of the migrated template every test database is cloned from (read it, never write it). */
export function templateUrl(): string {
  return withDatabase(inject("pgAdminUrl"), inject("pgTemplate"));
}

/**
 * Empty every table the product writes (identities restart) and give the cluster row its
 * defaults back. run_queue and the chart tables (chart_hours, chart_waits, chart_changes) are left out of the list: the TRUNCATE triggers on runs empty them.
 */
export async function emptyDatabase(pool: Pick<pg.Pool, "query">): Promise<void> {
  const { rows } = await pool.query<{ list: string }>(
    `SELECT string_agg(quote_ident(tablename), ', ' ORDER BY tablename) AS list FROM pg_tables
     WHERE schemaname = 'public' AND tablename NOT IN ('run_queue', 'chart_hours', 'chart_waits', 'chart_changes', 'sk_clock', 'cluster')`,
  );
  await pool.query(`TRUNCATE ${rows[0].list} RESTART IDENTITY CASCADE`);
  await pool.query("UPDATE cluster SET partitions = DEFAULT, rescued_at = NULL WHERE id = 1");
}

export type SetupTestDatabaseOptions = {
  /** Connections in the file's pool (default 10). */
  poolSize?: number;
  /**
   * Before each test, empty the tables (emptyDatabase) and stand the clock (default true). False
   * for a file whose tests share what its beforeAll wrote.
   */
  reset?: boolean;
  /** Where each test starts the database clock when `reset` (default null: the real clock). */
  clock?: Date | string | null;
  /**
   * The file calls app/api route handlers: point lib/server/db at this database (DATABASE_URL, read
   * on first use) and close the web pool when the file ends. Each request reads the Overview anew
   * (SLOTKEEPER_OVERVIEW_MAX_AGE_MS=0): a test reads it right after changing what it shows.
   */
  routes?: boolean;
};

/**
 * One call sets up a test file's database: created before the file's tests (beforeAll), emptied
 * and its clock stood before each test (beforeEach), dropped at the end (afterAll). Worker
 * processes a test started (lib/testing/spawn.ts) are killed after that test; ones started in a
 * beforeAll, when the file ends. The handle's fields are ready from the first beforeAll on.
 *
 *     const t = setupTestDatabase({ clock: T0 });
 *     it("…", async () => { const s = await makeSchedule(t.db); … });
 */
export function setupTestDatabase(opts: SetupTestDatabaseOptions = {}): TestDatabase {
  let current: TestDatabase | undefined;
  const get = (): TestDatabase => {
    if (!current) throw new Error("setupTestDatabase: the database is made in beforeAll; use it inside a hook or a test");
    return current;
  };
  const handle: TestDatabase = {
    get url() {
      return get().url;
    },
    get name() {
      return get().name;
    },
    get pool() {
      return get().pool;
    },
    get db() {
      return get().db;
    },
    drop: () => get().drop(),
  };
  let before = new Set<unknown>();

  beforeAll(async () => {
    current = await createTestDatabase({ poolSize: opts.poolSize });
    if (opts.routes) {
      process.env.DATABASE_URL = current.url;
      process.env.SLOTKEEPER_OVERVIEW_MAX_AGE_MS = "0";
    }
  });
  if (opts.reset !== false) {
    beforeEach(async () => {
      await emptyDatabase(get().pool);
      await setClock(get().pool, opts.clock ?? null);
    });
  }
  beforeEach(() => {
    before = new Set(liveWorkers());
  });
  afterEach(async () => {
    await killWorkers(liveWorkers().filter((w) => !before.has(w)));
  });
  afterAll(async () => {
    await killWorkers(liveWorkers());
    if (opts.routes) await (await import("../server/db")).closeDb();
    await current?.drop();
  });
  return handle;
}
