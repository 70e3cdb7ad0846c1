// A handler that holds more database connections than its pool has must not starve the worker's
// own loops: claims and lease renewals use a pool of their own (worker/index.ts). A real worker
// process, the database clock running (how long things take IS the measurement here).
import { describe, expect, it } from "vitest";
import { worstCaseLatenessSeconds } from "../lib/schedules/lateness";
import { runClockFrom } from "../lib/testing/clock";
import { setupTestDatabase } from "../lib/testing/db";
import { startWorkers } from "../lib/testing/spawn";
import { waitUntil } from "../lib/testing/wait";

const POLL_MS = 200;
const LEASE_SECONDS = 3;
// Concurrency 2: the handlers' pool holds 4 connections, the worker's own 6.
const ENV = { SLOTKEEPER_POLL_INTERVAL_MS: String(POLL_MS), SLOTKEEPER_CONCURRENCY: "2" };
const STATED = worstCaseLatenessSeconds({ jitterSeconds: 0, leaseSeconds: LEASE_SECONDS }, POLL_MS);
// 20 statements of 1.5 s on 4 connections: five rounds, 7.5 s, two and a half leases.
const HOG = { holdConnections: 20, holdMs: 1500 };

const t = setupTestDatabase();

describe("pool exhaustion by a handler", () => {
  it("keeps renewing the hog's lease and starting the other schedule's slots within the stated bound", async () => {
    await runClockFrom(t.pool, new Date());
    const now = (await t.pool.query<{ now: Date }>("SELECT sk_now() AS now")).rows[0].now.getTime();
    const first = Math.ceil(now / 1000 + 2) * 1000;
    const { rows } = await t.pool.query<{ id: string; name: string }>(
      `INSERT INTO schedules (name, handler, payload, every_seconds, lease_seconds, catch_up, next_slot_at, partition)
       VALUES ('hog', 'sql-ledger', $1::jsonb, 600, $2, 'all', $3, 0), ('steady', 'noop', '{}'::jsonb, 1, $2, 'all', $3, 1)
       RETURNING id, name`,
      [JSON.stringify(HOG), LEASE_SECONDS, new Date(first)],
    );
    const id = Object.fromEntries(rows.map((r) => [r.name, Number(r.id)]));
    await startWorkers(t.url, ["hogged"], ENV);
    const done = async (scheduleId: number) =>
      (await t.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM run_status WHERE schedule_id = $1 AND state = 'done'", [scheduleId])).rows[0].n;
    await waitUntil(async () => (await done(id.hog)) === 1, 60_000, "the hog's run to finish");
    // The done run (the tick may have written the hog's next slot beside it).
    const hog = await t.pool.query<{ attempts: number; duration_ms: number | null }>(
      "SELECT r.attempts, r.duration_ms FROM runs r JOIN run_status s ON s.id = r.id WHERE r.schedule_id = $1 AND s.state = 'done'",
      [id.hog],
    );
    const all = await t.pool.query("SELECT r.id, r.scheduled_for, r.origin, r.attempts, r.duration_ms, s.state FROM runs r JOIN run_status s ON s.id = r.id WHERE r.schedule_id = $1", [id.hog]);
    expect(hog.rows, JSON.stringify(all.rows)).toHaveLength(1);
    // It held its pool for two leases and more, on one attempt: every renewal went through.
    expect(hog.rows[0].duration_ms ?? 0, JSON.stringify(all.rows)).toBeGreaterThan(2 * LEASE_SECONDS * 1000);
    expect(hog.rows[0].attempts).toBe(1);
    // Every slot of the other schedule (noop: it needs only the claim) due while the hog ran started within the stated bound.
    const hogEnd = first + (hog.rows[0].duration_ms ?? 0);
    await waitUntil(async () => (await done(id.steady)) >= Math.floor((hogEnd - first) / 1000), 30_000, "the steady schedule's runs in the hog's time");
    const late = await t.pool.query<{ slot: Date; lag_ms: number }>(
      `SELECT r.scheduled_for AS slot, (extract(epoch FROM a.started_at - r.due_at) * 1000)::float8 AS lag_ms
       FROM runs r JOIN run_attempts a ON a.run_id = r.id AND a.attempt = 1
       WHERE r.schedule_id = $1 AND r.scheduled_for BETWEEN $2 AND $3`,
      [id.steady, new Date(first), new Date(hogEnd)],
    );
    expect(late.rows.length).toBeGreaterThanOrEqual(Math.floor((hogEnd - first) / 1000));
    expect(late.rows.filter((r) => r.lag_ms > STATED * 1000).map((r) => `${r.slot.toISOString()} ${Math.round(r.lag_ms)} ms`)).toEqual([]);
  });
});
