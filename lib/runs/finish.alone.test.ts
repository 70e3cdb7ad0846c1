// A success rewrites its runs row once, and that must stay a HOT update (the new version on the
// row's own page, no entry in runs' indexes) while pruning lags behind: at the top of the hour
// another connection's snapshot is always a few ms older than the finish before, so the old
// versions that finish left cannot be pruned yet. Alone (vitest.config.mts): a parallel suite's
// connections hold snapshots of their own, which this test wants to control.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { claimRuns } from "./claim";
import { finishRuns } from "./finish";
import { tickOnce } from "./tick";

const t = setupTestDatabase();

const SLOT = new Date("2030-01-01T10:00:00Z");
const PARTITIONS = 16;
const page = (tid: string) => tid.slice(1, tid.indexOf(","));

describe("finishRuns on the top of the hour", () => {
  it("keeps the runs of six partitions of sixteen on their pages with no prune in between (fillfactor)", async () => {
    await t.pool.query(
      `INSERT INTO schedules (name, handler, cron, timezone, catch_up, next_slot_at, partition)
       SELECT 'hourly-' || g, 'noop', '0 * * * *', 'UTC', 'latest', $1, mod(g, $2) FROM generate_series(1, 4800) g`,
      [SLOT, PARTITIONS],
    );
    // Written as a worker holding every partition writes them: each batch takes its share of every
    // partition, so each page holds a few runs of each.
    await setClock(t.pool, new Date(SLOT.getTime() - 600_000));
    const all = Array.from({ length: PARTITIONS }, (_, p) => p);
    while ((await tickOnce(t.db, { partitions: all, horizonSeconds: 900, graceSeconds: 30, batchSize: 1000, maxBatches: 10 })).schedules > 0);
    const { rows: before } = await t.pool.query<{ id: string; tid: string }>("SELECT id, ctid::text AS tid FROM runs");
    expect(before).toHaveLength(4800);
    const pageOf = new Map(before.map((r) => [Number(r.id), page(r.tid)]));
    await setClock(t.pool, new Date(SLOT.getTime() + 1_000));

    // A snapshot older than every finish below: nothing they leave behind can be pruned meanwhile.
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    let finished: number[] = [];
    try {
      await holder.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
      await holder.query("SELECT count(*) FROM runs");
      // Six partitions, one claim batch each as a worker takes them: 37.5 % of every page's rows.
      for (let p = 0; p < 6; p++) {
        const claimed = await claimRuns(t.db, { workerId: "w1", partitions: [p], limit: 500 });
        expect(claimed.length).toBe(300);
        await finishRuns(t.db, "w1", claimed.map((r) => ({ id: r.id, scheduleId: r.scheduleId, queueTid: r.queueTid, attempt: r.attempt, outcome: "succeeded" as const, durationMs: 1 })));
        finished = finished.concat(claimed.map((r) => r.id));
      }
    } finally {
      await holder.query("COMMIT").catch(() => {});
      await holder.end();
    }

    const { rows: after } = await t.pool.query<{ id: string; tid: string; state: string }>("SELECT id, ctid::text AS tid, state FROM runs WHERE id = ANY($1::bigint[])", [finished]);
    expect(after.every((r) => r.state === "done")).toBe(true);
    const moved = after.filter((r) => page(r.tid) !== pageOf.get(Number(r.id))).length;
    // At the table's fillfactor nearly all stay on their page; at the old fillfactor of 80 about half left it.
    expect(moved, `${moved} of ${after.length} finished runs left their page`).toBeLessThanOrEqual(18);
  });
});
