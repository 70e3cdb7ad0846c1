// The peers' phase at a tiny size against a real server: every job loaded into graphile-worker and
// pg-boss is started exactly once, read from the starts the tasks recorded (so the measurement
// cannot silently drop or double-count jobs).
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../lib/testing/db";
import { runPeer } from "./peers";
import { PEERS } from "./peer-tuning";

const JOBS = 200;

describe.each(PEERS)("the peers' spike in %s", (peer) => {
  it(`starts each of ${JOBS} jobs due at one instant exactly once`, async () => {
    const t = await createTestDatabase({ template: "empty", poolSize: 2 });
    try {
      const report = await runPeer(peer, { url: t.url, jobs: JOBS, workers: 2, batch: 50, pollIntervalMs: 200 });
      // The oracle: 1..N against the recorded starts, counted here rather than taken from the report.
      const { rows } = await t.pool.query<{ n: number; starts: number }>(
        `SELECT g AS n, count(s.job)::int AS starts FROM generate_series(1, $1::int) g LEFT JOIN peer_starts s ON s.job = g GROUP BY g`,
        [JOBS],
      );
      expect(rows.filter((r) => r.starts !== 1)).toEqual([]);
      const { rows: stray } = await t.pool.query(`SELECT job FROM peer_starts WHERE job NOT BETWEEN 1 AND $1`, [JOBS]);
      expect(stray).toEqual([]);
      // The report says the same.
      expect(report).toMatchObject({ peer, jobs: JOBS, recordedStarts: JOBS, jobsStarted: JOBS, repeatedStarts: 0, loadedBeforeDue: true });
      expect(report.byWorker.reduce((sum, w) => sum + w.runs, 0)).toBe(JOBS);
    } finally {
      await t.drop();
    }
  });
});
