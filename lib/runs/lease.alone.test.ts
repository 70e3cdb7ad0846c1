// Renewing a worker's leases must stay a HOT update: the row's new version on its own page, no
// index entry written. Rows claimed together share pages, so this checks the renewal of a whole
// claimed batch, round after round, on a real table. Alone (vitest.config.mts): a prune needs no
// other snapshot older than the last wave and no other pin on the page, which a parallel suite's
// connections and checkpoints break often enough to fail it.
import { describe, expect, it } from "vitest";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeSchedule } from "../testing/factories";
import { claimRuns } from "./claim";
import { heartbeatRuns, renewalWaves } from "./lease";

const t = setupTestDatabase({ clock: "2030-01-01T10:00:00Z" });

const page = (tid: string) => tid.slice(1, tid.indexOf(","));

describe("heartbeatRuns", () => {
  it("renews a whole claimed batch three times, the rows staying on their pages (HOT)", async () => {
    const s = await makeSchedule(t.db, { everySeconds: 60 });
    await t.pool.query(
      `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, max_attempts)
       SELECT $1, 0, sk_now() - make_interval(mins => g), sk_now(), sk_now(), 'pending', 'backfill', 3 FROM generate_series(1, 600) g`,
      [s.id],
    );
    const claimed = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 600 });
    expect(claimed).toHaveLength(600);
    const held = claimed.map((r) => ({ id: r.id, scheduleId: r.scheduleId, attempt: r.attempt, queueTid: r.queueTid! }));
    // The batch fills pages: the case where renewing everything at once cannot stay on the page.
    expect(new Set(held.map((h) => page(h.queueTid))).size).toBeLessThan(60);

    for (let round = 0; round < 3; round++) {
      const renewed = await heartbeatRuns(t.db, "w1", held);
      expect(renewed.size).toBe(600);
      let moved = 0;
      for (const h of held) {
        const tid = renewed.get(h.id)!;
        if (page(tid) !== page(h.queueTid)) moved++;
        h.queueTid = tid;
      }
      // Renewed in one statement (WAVES = 1), about half of them would move. A few may move anyway
      // when another session's snapshot (a connection starting up, an autoanalyze) keeps a wave
      // from pruning the one before it: a tenth is the bound.
      expect(moved, `round ${round}: ${moved} of 600 renewals left their page`).toBeLessThanOrEqual(60);
    }
    const { rows } = await t.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM run_queue WHERE state = 'running' AND lease_expires_at = sk_now() + make_interval(secs => lease_seconds)",
    );
    expect(rows[0].n).toBe(600);
  });

  it("splits the rows of one page across waves and keeps rows of unknown place in the first", () => {
    const runs: { id: number; queueTid?: string }[] = [
      ...Array.from({ length: 12 }, (_, i) => ({ id: i, queueTid: `(7,${i + 1})` })),
      { id: 100, queueTid: "(8,1)" },
      { id: 101 },
    ];
    const waves = renewalWaves(runs);
    expect(waves).toHaveLength(5);
    expect(waves.flat().map((r) => r.id).sort((a, b) => a - b)).toEqual(runs.map((r) => r.id).sort((a, b) => a - b));
    for (const w of waves) expect(w.filter((r) => r.queueTid?.startsWith("(7,")).length).toBeLessThanOrEqual(3);
    expect(waves[0].map((r) => r.id)).toEqual(expect.arrayContaining([100, 101]));
  });
});
