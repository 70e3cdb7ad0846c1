import { describe, expect, it } from "vitest";
import { createLogger } from "../../lib/log";
import { advanceClock } from "../../lib/testing/clock";
import { setupTestDatabase } from "../../lib/testing/db";
import { makeSchedule } from "../../lib/testing/factories";
import { waitUntil } from "../../lib/testing/wait";
import { startTickLoop } from "./tick";

const log = createLogger("test", "silent");
const NOW = new Date("2031-05-06T07:00:00Z");
const HORIZON = 120;
const t = setupTestDatabase({ clock: NOW });

const runsOf = async (scheduleId: number) =>
  (await t.pool.query<{ at: Date }>(`SELECT scheduled_for AS at FROM runs WHERE schedule_id = $1 ORDER BY scheduled_for`, [scheduleId])).rows.map((r) => r.at.getTime());
const until = (what: string, ok: () => Promise<boolean>) => waitUntil(ok, 10_000, what, 20);

describe("tick loop", () => {
  it("while backlogged leaves materialising to later as long as it is half its horizon ahead, and not below that", async () => {
    // Every 30 s from NOW + 90 s: the first slot is 90 s ahead, beyond half the horizon.
    const s = await makeSchedule(t.db, { partition: 0, everySeconds: 30, nextSlotAt: new Date(NOW.getTime() + 90_000) });
    let passes = 0;
    const loop = startTickLoop({
      db: t.db,
      log,
      intervalMs: 10,
      horizonSeconds: HORIZON,
      graceSeconds: 60,
      partitions: () => {
        passes++;
        return [0];
      },
      backlogged: () => true,
    });
    try {
      await until("three tick passes", async () => passes >= 3);
      expect(await runsOf(s.id)).toEqual([]);
      // 50 s ahead: under half the horizon, so it ticks, backlog or not, up to sk_now() + horizon
      // (the oracle: the slots every 30 s from NOW + 90 s to NOW + 40 s + 120 s).
      await advanceClock(t.pool, 40_000);
      await until("the whole horizon", async () => (await runsOf(s.id)).length === 3);
      expect(await runsOf(s.id)).toEqual([90, 120, 150].map((x) => NOW.getTime() + x * 1000));
    } finally {
      await loop.stop();
    }
  });

  it("without a backlog materialises the whole horizon at once", async () => {
    const s = await makeSchedule(t.db, { partition: 1, everySeconds: 30, nextSlotAt: new Date(NOW.getTime() + 90_000) });
    const loop = startTickLoop({ db: t.db, log, intervalMs: 10, horizonSeconds: HORIZON, graceSeconds: 60, partitions: () => [1], backlogged: () => false });
    try {
      const clock = (await t.pool.query<{ now: Date }>("SELECT sk_now() AS now")).rows[0].now.getTime();
      // The oracle: every 30 s from NOW + 90 s up to the clock + the horizon.
      const expected = [90, 120, 150, 180, 210, 240, 270].map((x) => NOW.getTime() + x * 1000).filter((x) => x <= clock + HORIZON * 1000);
      await until("the slots within the horizon", async () => (await runsOf(s.id)).length === expected.length);
      expect(await runsOf(s.id)).toEqual(expected);
    } finally {
      await loop.stop();
    }
  });
});
