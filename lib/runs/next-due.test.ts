import { describe, expect, it } from "vitest";
import { advanceClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRuns, makeSchedule } from "../testing/factories";
import { claimRuns } from "./claim";
import { nextDueInMs } from "./next-due";

const T0 = new Date("2030-01-01T10:00:00Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

const t = setupTestDatabase({ clock: T0 });

describe("nextDueInMs", () => {
  it("is the database clock's distance to the earliest pending run ahead, in the given partitions", async () => {
    const p3 = (await makeSchedule(t.db, { partition: 3 })).id;
    const p5 = (await makeSchedule(t.db, { partition: 5 })).id;
    await makeRuns(t.db, p3, [{ scheduledFor: at(-60_000) }, { scheduledFor: at(150) }, { scheduledFor: at(90_000) }]);
    await makeRuns(t.db, p5, [{ scheduledFor: at(40) }]);
    // Already due (at -60 s) is the claim's business, not a wake-up: the earliest ahead is 40 ms away.
    expect(await nextDueInMs(t.db, null)).toBe(40);
    expect(await nextDueInMs(t.db, [3, 5])).toBe(40);
    expect(await nextDueInMs(t.db, [3])).toBe(150);
    expect(await nextDueInMs(t.db, [7])).toBeNull();
    // It reads the database's clock: moved on by 100 ms, partition 3's run is 50 ms away.
    await advanceClock(t.pool, 100);
    expect(await nextDueInMs(t.db, [3])).toBe(50);
    // A fraction of a millisecond rounds up, so a wake at that delay never comes before the run is due.
    await advanceClock(t.pool, 0.4);
    expect(await nextDueInMs(t.db, [3])).toBe(50);
  });

  it("counts pending runs only: a claimed run is no longer ahead, a retry waiting on backoff is", async () => {
    const s = (await makeSchedule(t.db, { partition: 2 })).id;
    const [now] = await makeRuns(t.db, s, [{ scheduledFor: T0 }, { scheduledFor: at(-3_600_000), runAfter: at(2_500), attempts: 1 }]);
    // The run due now is claimed; its lease's end (its queue row's run_after) is not a pending due time.
    expect((await claimRuns(t.db, { workerId: "w", partitions: [2], limit: 1 })).map((c) => c.id)).toEqual([now]);
    expect(await nextDueInMs(t.db, [2])).toBe(2_500);
  });
});
