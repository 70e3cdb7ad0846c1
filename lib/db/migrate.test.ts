import pg from "pg";
import { describe, expect, it } from "vitest";
import { advanceClock, dbNow, runClockFrom, setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { migrateDatabase } from "./migrate";

const t = setupTestDatabase();

describe("migrations", () => {
  it("can be applied again, and by four processes at once, without error or duplicates", async () => {
    await migrateDatabase(t.url);
    await Promise.all([1, 2, 3, 4].map(() => migrateDatabase(t.url)));
    const { rows } = await t.pool.query("SELECT count(*)::int AS n, count(DISTINCT hash)::int AS d FROM drizzle.__drizzle_migrations");
    expect(rows[0].n).toBe(rows[0].d);
    expect(rows[0].n).toBeGreaterThanOrEqual(2);
  });

  it("creates every table the product uses", async () => {
    const { rows } = await t.pool.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    const names = rows.map((r) => r.tablename);
    for (const table of ["schedules", "runs", "attempts", "workers", "partition_leases", "audit_log", "sk_clock", "cluster", "people", "sessions"]) {
      expect(names).toContain(table);
    }
  });
});

describe("the database clock", () => {
  it("reads now() by default and a frozen instant when a test stands it still", async () => {
    const real = await dbNow(t.pool);
    expect(Math.abs(real.getTime() - Date.now())).toBeLessThan(60_000);
    await setClock(t.pool, "2026-01-05T10:02:00Z");
    expect((await dbNow(t.pool)).toISOString()).toBe("2026-01-05T10:02:00.000Z");
    await advanceClock(t.pool, 50 * 60_000);
    expect((await dbNow(t.pool)).toISOString()).toBe("2026-01-05T10:52:00.000Z");
  });

  it("is shared by every connection, so separate processes agree on the time", async () => {
    await runClockFrom(t.pool, "2030-06-01T00:00:00Z");
    const other = new pg.Client({ connectionString: t.url });
    await other.connect();
    const { rows } = await other.query<{ now: Date }>("SELECT sk_now() AS now");
    await other.end();
    expect(rows[0].now.getUTCFullYear()).toBe(2030);
  });
});

describe("slot uniqueness", () => {
  it("refuses a second row for the same schedule and slot, but allows manual runs at that time", async () => {
    const { rows } = await t.pool.query(
      `INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition) VALUES ('u', 'noop', 60, now(), 0) RETURNING id`,
    );
    const id = rows[0].id;
    const insert = (origin: string) =>
      t.pool.query(
        `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, max_attempts, origin)
         VALUES ($1, 0, '2026-01-01T10:00Z', '2026-01-01T10:00Z', '2026-01-01T10:00Z', 3, $2)`,
        [id, origin],
      );
    await insert("schedule");
    await expect(insert("catch_up")).rejects.toMatchObject({ code: "23505" });
    await insert("manual");
    await insert("manual");
  });
});
