// An upgrade loses nothing. A database made by the first migrations (the schema as it was released
// with 0000-0009), holding schedules and runs in every state, is migrated to the schema of this
// tree; every row must still be there with the same values, and the product (claim, heartbeat,
// re-queue, history) must treat the old runs as it treats new ones. The data is written in plain
// SQL against that old schema and checked through today's code, so the test keeps working as
// migrations are added: a later migration that changes stored values, or drops a column that held
// anything, fails it until the test says why (DROPPED_COLUMNS).
import fs from "node:fs";
import path from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../audit/record";
import { claimRuns } from "../runs/claim";
import { getRunDetail, listRuns } from "../runs/history";
import { heartbeatRuns } from "../runs/lease";
import { findQueueMismatches } from "../runs/queue-consistency";
import { requeueRuns } from "../runs/requeue";
import { createTestDatabase, type TestDatabase } from "../testing/db";
import { firstMigrations } from "../testing/migrations";
import { migrateDatabase, migrationsFolder } from "./migrate";

/** The journal entries of the released schema this test upgrades from: 0000 to 0009. */
const RELEASED = 10;

/**
 * Columns a later migration removed, with what they held in the released schema (checked below):
 * nothing at all, or values moved into another column of the same row by a fixed map.
 */
const DROPPED_COLUMNS: Record<string, { why: string; heldOnlyNull: true } | { why: string; movedTo: string; map: Record<string, string> }> = {
  "runs.lease_owner": { why: "the lease lives in run_queue since 0006; nothing read it", heldOnlyNull: true },
  "runs.lease_expires_at": { why: "the lease lives in run_queue since 0006; nothing read it", heldOnlyNull: true },
  "api_tokens.role": { why: "a token's scope (read | operate | admin) replaced its role in 0014", movedTo: "scope", map: { viewer: "read", operator: "operate" } },
};

const T0 = "2030-01-01T10:00:00Z";

/**
 * Schedules and runs in every state, as the released schema stores them. A running run's record
 * reads pending with the attempts that ended, and its queue row holds the lease (0006).
 */
async function writeReleasedData(db: pg.Pool) {
  await db.query(`UPDATE sk_clock SET frozen_at = $1 WHERE id = 1`, [T0]);
  await db.query(`
    INSERT INTO schedules (name, description, handler, payload, cron, every_seconds, timezone, catch_up, max_lateness_seconds, jitter_seconds, overlap,
        retry_max_attempts, retry_base_seconds, retry_cap_seconds, lease_seconds, enabled, next_slot_at, partition, late_after_seconds, retention_days, deleted_at, created_at, updated_at, version)
    VALUES
      ('hourly-report', 'the report', 'http', '{"url": "https://example.test/hook", "method": "POST"}', '0 * * * *', NULL, 'Europe/London', 'latest', 3600, 0, 'allow',
        6, 30, 900, 60, true, '2030-01-01T11:00:00Z', 3, NULL, NULL, NULL, '2029-12-01T00:00:00Z', '2029-12-02T00:00:00Z', 3),
      ('every-minute', '', 'noop', '{"n": 1}', NULL, 60, 'UTC', 'all', NULL, 5, 'forbid',
        3, 10, 60, 30, true, '2030-01-01T10:01:00Z', 7, 600, 14, NULL, '2029-12-01T00:00:00Z', '2029-12-01T00:00:00Z', 1),
      ('paused', '', 'noop', '{"n": 1}', NULL, 60, 'UTC', 'skip', NULL, 0, 'allow',
        3, 10, 60, 30, false, '2030-01-01T10:01:00Z', 7, NULL, NULL, NULL, '2029-12-01T00:00:00Z', '2029-12-01T00:00:00Z', 2),
      ('gone', '', 'noop', '{}', NULL, 300, 'UTC', 'latest', NULL, 0, 'allow',
        6, 30, 900, 60, true, '2030-01-01T10:05:00Z', 1, NULL, NULL, '2029-12-20T00:00:00Z', '2029-12-01T00:00:00Z', '2029-12-20T00:00:00Z', 4)`);
  const id = async (name: string) => Number((await db.query("SELECT id FROM schedules WHERE name = $1", [name])).rows[0].id);
  const [report, minute, gone] = [await id("hourly-report"), await id("every-minute"), await id("gone")];
  const run = async (v: Record<string, unknown>) => {
    const cols = Object.keys(v);
    const { rows } = await db.query(`INSERT INTO runs (${cols.join(", ")}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING id`, Object.values(v));
    return Number(rows[0].id);
  };
  const base = (scheduleId: number, partition: number, slot: string) => ({ schedule_id: scheduleId, partition, scheduled_for: slot, due_at: slot, run_after: slot, max_attempts: 6 });
  const ids = {
    // A first-attempt success: its attempt is on the run row alone.
    done: await run({ ...base(report, 3, "2030-01-01T07:00:00Z"), state: "done", attempts: 1, worker_id: "w1", started_at: "2030-01-01T07:00:01Z", finished_at: "2030-01-01T07:00:03Z", duration_ms: 2000 }),
    // A success on the second attempt, after a failure recorded in attempts.
    retried: await run({ ...base(report, 3, "2030-01-01T08:00:00Z"), state: "done", attempts: 2, worker_id: "w2", started_at: "2030-01-01T08:01:00Z", finished_at: "2030-01-01T08:01:02Z", duration_ms: 1500 }),
    // Dead after its last attempt: its queue row waits for an operator.
    dead: await run({ ...base(report, 3, "2030-01-01T09:00:00Z"), state: "dead", attempts: 6, worker_id: "w1", started_at: "2030-01-01T09:20:00Z", finished_at: "2030-01-01T09:20:01Z", last_error: "HTTP 500" }),
    // Running: the record says pending with the one attempt that ended; the queue holds attempt 2's lease.
    running: await run({ ...base(report, 3, "2030-01-01T09:30:00Z"), origin: "backfill", state: "pending", attempts: 1, run_after: "2030-01-01T09:30:30Z", last_error: "timeout" }),
    // Due now and waiting; the next slot, not due yet.
    due: await run({ ...base(minute, 7, "2030-01-01T09:59:00Z"), max_attempts: 3, due_at: "2030-01-01T09:59:04Z", run_after: "2030-01-01T09:59:04Z" }),
    later: await run({ ...base(minute, 7, "2030-01-01T10:01:00Z"), max_attempts: 3, due_at: "2030-01-01T10:01:04Z", run_after: "2030-01-01T10:01:04Z" }),
    // A manual run at the instant of a scheduled slot: slot_seq tells them apart.
    manual: await run({ ...base(minute, 7, "2030-01-01T09:58:00Z"), origin: "manual", state: "done", attempts: 1, max_attempts: 3, worker_id: "w1", started_at: "2030-01-01T09:58:00Z", finished_at: "2030-01-01T09:58:01Z", duration_ms: 10 }),
    scheduled: await run({ ...base(minute, 7, "2030-01-01T09:58:00Z"), state: "done", attempts: 1, max_attempts: 3, worker_id: "w2", started_at: "2030-01-01T09:58:04Z", finished_at: "2030-01-01T09:58:05Z", duration_ms: 12 }),
    // A range of missed slots in one row, and a slot coalesced into a later one.
    missed: await run({ ...base(minute, 7, "2030-01-01T09:00:00Z"), max_attempts: 3, state: "skipped", skip_reason: "missed", skipped_until: "2030-01-01T09:04:00Z", skipped_count: 5, finished_at: "2030-01-01T09:30:00Z" }),
    coalesced: await run({ ...base(minute, 7, "2030-01-01T09:10:00Z"), origin: "catch_up", max_attempts: 3, state: "skipped", skip_reason: "coalesced", coalesced_into: "2030-01-01T09:11:00Z", skipped_count: 1, skipped_until: "2030-01-01T09:10:00Z", finished_at: "2030-01-01T09:30:00Z" }),
    // The history a soft-deleted schedule keeps.
    kept: await run({ ...base(gone, 1, "2029-12-19T10:00:00Z"), state: "done", attempts: 1, worker_id: "w1", started_at: "2029-12-19T10:00:01Z", finished_at: "2029-12-19T10:00:02Z", duration_ms: 5 }),
  };
  await db.query(
    `UPDATE run_queue SET state = 'running', attempts = 2, lease_owner = 'w2', lease_expires_at = '2030-01-01T10:00:40Z', started_at = '2030-01-01T09:59:40Z',
       run_after = '2030-01-01T10:00:40Z' WHERE run_id = $1`,
    [ids.running],
  );
  await db.query(
    `INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, error, duration_ms) VALUES
       ($1, 1, 'w1', '2030-01-01T08:00:01Z', '2030-01-01T08:00:31Z', 'failed', 'connection refused', 30000),
       ($2, 1, 'w3', '2030-01-01T09:30:01Z', '2030-01-01T09:30:30Z', 'lease_expired', 'lease expired: worker w3 stopped renewing it', NULL)`,
    [ids.retried, ids.running],
  );
  await db.query(
    `INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, error, duration_ms)
     SELECT $1, g, 'w1', $2::timestamptz + g * interval '1 minute', $2::timestamptz + g * interval '1 minute' + interval '1 second', 'failed', 'HTTP 500', 1000
     FROM generate_series(1, 6) g`,
    [ids.dead, "2030-01-01T09:00:00Z"],
  );
  await db.query(`INSERT INTO workers (id, hostname, pid, concurrency, handlers, started_at, last_heartbeat_at, in_flight, version)
    VALUES ('w2', 'host-b', 4242, 10, '[{"name": "http", "idempotent": false, "description": ""}]', '2030-01-01T09:00:00Z', '2030-01-01T09:59:55Z', 1, '0.1.0')`);
  await db.query(`INSERT INTO partition_leases (partition, owner, lease_expires_at, token) SELECT g, 'w2', '2030-01-01T10:00:10Z', 3 FROM generate_series(0, 15) g`);
  await db.query(`INSERT INTO audit_log (at, actor, actor_kind, action, target_type, target_id, schedule_id, before, after)
    VALUES ('2029-12-02T00:00:00Z', 'alice', 'session', 'schedule.update', 'schedule', 'hourly-report', $1, '{"leaseSeconds": 30}', '{"leaseSeconds": 60}')`, [report]);
  await db.query(`INSERT INTO api_tokens (name, role, token_hash, created_by, created_at) VALUES ('ci', 'operator', 'sha256:abc', 'alice', '2029-12-01T00:00:00Z'), ('dash', 'viewer', 'sha256:def', 'alice', '2029-12-02T00:00:00Z')`);
  await db.query(`INSERT INTO alert_channels (name, kind, config) VALUES ('ops', 'webhook', '{"url": "https://example.test/alerts"}')`);
  await db.query(`INSERT INTO alert_states (schedule_id, rule, firing, since) VALUES ($1, 'failing', true, '2030-01-01T09:20:01Z')`, [report]);
  await db.query(`INSERT INTO alert_events (schedule_id, schedule_name, rule, kind, at, details) VALUES ($1, 'hourly-report', 'failing', 'firing', '2030-01-01T09:20:05Z', '{"deadRuns": 1}')`, [report]);
  await db.query(`INSERT INTO alert_deliveries (event_id, channel_id, state, attempts) SELECT e.id, c.id, 'delivered', 1 FROM alert_events e, alert_channels c`);
  await db.query(`INSERT INTO ledger (idempotency_key, schedule_id, scheduled_for, fencing_token, worker_id) VALUES ('k1', $1, '2030-01-01T07:00:00Z', 1, 'w1')`, [report]);
  return { ids, report, minute, gone };
}

type Snapshot = Map<string, { columns: string[]; rows: Record<string, unknown>[] }>;

/** Every row of every table and view in public, as JSON, with its relation's columns. */
async function snapshot(db: pg.Pool): Promise<Snapshot> {
  const { rows: rels } = await db.query<{ rel: string }>(
    "SELECT c.relname AS rel FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v') ORDER BY 1",
  );
  const out: Snapshot = new Map();
  for (const { rel } of rels) {
    const { rows: cols } = await db.query<{ name: string }>("SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped", [rel]);
    const { rows } = await db.query<{ r: Record<string, unknown> }>(`SELECT to_jsonb(t) AS r FROM ${rel} t`);
    out.set(rel, { columns: cols.map((c) => c.name), rows: rows.map((x) => x.r) });
  }
  return out;
}

/** The rows of one relation on these columns only, in a stable order. */
const project = (rows: Record<string, unknown>[], columns: string[]) =>
  rows.map((r) => JSON.stringify(Object.fromEntries(columns.map((c) => [c, r[c]])))).sort();

let old: TestDatabase;
let data: Awaited<ReturnType<typeof writeReleasedData>>;
let before: Snapshot;
let after: Snapshot;

beforeAll(async () => {
  old = await createTestDatabase({ template: "empty" });
  await migrateDatabase(old.url, { migrationsFolder: firstMigrations(RELEASED) });
  data = await writeReleasedData(old.pool);
  before = await snapshot(old.pool);
  await migrateDatabase(old.url);
  after = await snapshot(old.pool);
});
afterAll(async () => {
  await old?.drop();
});

describe("upgrading a database of the released schema", () => {
  it("applies every later migration", async () => {
    const { rows } = await old.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations");
    const journal = JSON.parse(fs.readFileSync(path.join(migrationsFolder, "meta/_journal.json"), "utf8")) as { entries: unknown[] };
    expect(rows[0].n).toBe(journal.entries.length);
  });

  it("stores each old schedule's last success: the latest finish of its done runs (0032's backfill, moved to schedule_last_success by 0036)", async () => {
    const { rows } = await old.pool.query<{ name: string; stored: string | null; oracle: string | null }>(`
      SELECT s.name, l.last_success_at::text AS stored,
        (SELECT max(r.finished_at) FROM runs r WHERE r.schedule_id = s.id AND r.state = 'done')::text AS oracle
      FROM schedules s JOIN schedule_last_success l ON l.schedule_id = s.id ORDER BY s.name`);
    expect(rows.some((r) => r.oracle !== null)).toBe(true);
    expect(rows.map((r) => [r.name, r.stored])).toEqual(rows.map((r) => [r.name, r.oracle]));
  });

  it("keeps every table and view, and every row with the values it had", () => {
    const lost: string[] = [];
    for (const [rel, b] of before) {
      const a = after.get(rel);
      if (!a) {
        lost.push(`${rel}: the relation is gone`);
        continue;
      }
      const kept = b.columns.filter((c) => a.columns.includes(c));
      for (const c of b.columns.filter((c) => !a.columns.includes(c))) {
        const dropped = DROPPED_COLUMNS[`${rel}.${c}`];
        if (!dropped) lost.push(`${rel}.${c}: the column is gone (add it to DROPPED_COLUMNS with the reason if nothing read it)`);
        else if ("movedTo" in dropped) {
          b.rows.forEach((r, i) => {
            if (a.rows[i]?.[dropped.movedTo] !== dropped.map[String(r[c])]) lost.push(`${rel}.${c}: row ${i} held ${String(r[c])}, ${dropped.movedTo} reads ${String(a.rows[i]?.[dropped.movedTo])}`);
          });
        } else if (b.rows.some((r) => r[c] !== null)) lost.push(`${rel}.${c}: dropped while it held values`);
      }
      expect(project(a.rows, kept), `${rel}: rows on the columns it kept`).toEqual(project(b.rows, kept));
    }
    expect(lost).toEqual([]);
    expect(before.get("runs")!.rows).toHaveLength(Object.keys(data.ids).length);
  });

  it("shows the old runs as they stood: state, attempts, lease, history, a manual run beside its slot", async () => {
    const db = old.db;
    expect(await getRunDetail(db, data.ids.running)).toMatchObject({
      state: "running",
      attempts: 2,
      leaseOwner: "w2",
      leaseExpiresAt: "2030-01-01T10:00:40.000Z",
      startedAt: "2030-01-01T09:59:40.000Z",
      origin: "backfill",
      attemptsList: [{ attempt: 1, workerId: "w3", outcome: "lease_expired" }],
    });
    expect((await getRunDetail(db, data.ids.retried)).attemptsList.map((a) => [a.attempt, a.workerId, a.outcome])).toEqual([
      [1, "w1", "failed"],
      [2, "w2", "succeeded"],
    ]);
    expect(await getRunDetail(db, data.ids.dead)).toMatchObject({ state: "dead", attempts: 6, lastError: "HTTP 500" });
    expect(await getRunDetail(db, data.ids.missed)).toMatchObject({ state: "skipped", skipReason: "missed", skippedCount: 5, skippedUntil: "2030-01-01T09:04:00.000Z" });
    const history = await listRuns(db, { scheduleIds: [data.minute] });
    expect(history.runs.map((r) => r.id)).toEqual([data.ids.later, data.ids.due, data.ids.manual, data.ids.scheduled, data.ids.coalesced, data.ids.missed]);
    expect((await listRuns(db, { scheduleIds: [data.gone] })).runs.map((r) => r.id)).toEqual([data.ids.kept]);
    expect(await findQueueMismatches(db)).toEqual({ missing: 0, orphaned: 0, wrongState: 0, duplicated: 0, staleCopies: 0 });
  });

  it("goes on working the old runs: the lease holder renews, the due run is claimed with its settings, the dead run is re-queued", async () => {
    const db = old.db;
    const renewed = await heartbeatRuns(db, "w2", [{ id: data.ids.running, attempt: 2 }]);
    expect([...renewed.keys()]).toEqual([data.ids.running]);
    expect((await getRunDetail(db, data.ids.running)).leaseExpiresAt).toBe("2030-01-01T10:01:00.000Z");
    // Not yet expired (sk_now() is 10:00), so no rescue: only the one due pending run is claimable.
    const claimed = await claimRuns(db, { workerId: "w9", partitions: null, limit: 10 });
    expect(claimed.map((c) => ({ id: c.id, handler: c.handler, payload: c.payload, attempt: c.attempt, leaseSeconds: c.leaseSeconds, maxAttempts: c.maxAttempts }))).toEqual([
      { id: data.ids.due, handler: "noop", payload: { n: 1 }, attempt: 1, leaseSeconds: 30, maxAttempts: 3 },
    ]);
    expect(claimed[0].retry).toEqual({ maxAttempts: 3, baseSeconds: 10, capSeconds: 60 });
    expect((await requeueRuns(db, [data.ids.dead], SYSTEM_ACTOR)).requeued).toEqual([data.ids.dead]);
    expect(await getRunDetail(db, data.ids.dead)).toMatchObject({ state: "pending", attempts: 6 });
  });
});
