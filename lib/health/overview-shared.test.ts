import { afterEach, describe, expect, it, vi } from "vitest";
import { makeSchedule } from "../testing/factories";
import { setupTestDatabase } from "../testing/db";
import type { Db } from "../db/client";
import { getOverview, type OverviewSummary } from "./overview";
import { DUTY_FACTOR, sharedOverview, STALE_FACTOR, STALE_WAIT_MS } from "./overview-shared";

const t = setupTestDatabase();

/** A reading held until the test lets it go, numbered in the order it began. */
function heldReadings() {
  const begun: { n: number; release: (v: OverviewSummary) => void; fail: (e: Error) => void }[] = [];
  const read = (_db: Db) =>
    new Promise<OverviewSummary>((release, fail) => {
      begun.push({ n: begun.length + 1, release, fail });
    });
  return { begun, read };
}

const answer = (n: number) => ({ totals: { now: `reading ${n}` } }) as unknown as OverviewSummary;

afterEach(() => {
  vi.useRealTimers();
});

describe("the Overview shared by its readers", () => {
  it("twenty readers at once cause one reading of the database, and all get its answer", async () => {
    await makeSchedule(t.db, { name: "shared-a" });
    let readings = 0;
    const counted = async (db: Db) => {
      readings++;
      return getOverview(db);
    };
    const answers = await Promise.all(Array.from({ length: 20 }, () => sharedOverview(t.db, 60_000, counted)));
    expect(readings).toBe(1);
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0].totals.schedules).toBeGreaterThanOrEqual(0);
    // Sharing off: a reading per request.
    await Promise.all(Array.from({ length: 3 }, () => sharedOverview(t.db, 0, counted)));
    expect(readings).toBe(4);
  });

  it("serves an answer while it is fresh, then a new reading, or the last answer while a slow one runs, never older than the stale limit", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const db = {} as Db;
    const { begun, read } = heldReadings();
    const maxAge = 1_000;

    // No answer yet: the reader waits for the first reading, however long it takes.
    const first = sharedOverview(db, maxAge, read);
    await vi.advanceTimersByTimeAsync(2 * STALE_WAIT_MS);
    expect(begun).toHaveLength(1);
    begun[0].release(answer(1));
    expect((await first).totals.now).toBe("reading 1");

    // Fresh (its age counts from when its reading began): no new reading.
    await vi.advanceTimersByTimeAsync(maxAge - 2 * STALE_WAIT_MS - 10);
    expect((await sharedOverview(db, maxAge, read)).totals.now).toBe("reading 1");
    expect(begun).toHaveLength(1);

    // Older than maxAge: a new reading; one that answers within STALE_WAIT_MS is what the reader gets.
    await vi.advanceTimersByTimeAsync(20);
    const quick = sharedOverview(db, maxAge, read);
    await vi.advanceTimersByTimeAsync(0);
    expect(begun).toHaveLength(2);
    begun[1].release(answer(2));
    expect((await quick).totals.now).toBe("reading 2");

    // A slow reading: readers get the last answer after STALE_WAIT_MS, and share the one reading.
    await vi.advanceTimersByTimeAsync(maxAge + 1);
    const slow = [sharedOverview(db, maxAge, read), sharedOverview(db, maxAge, read)];
    await vi.advanceTimersByTimeAsync(STALE_WAIT_MS);
    expect((await Promise.all(slow)).map((a) => a.totals.now)).toEqual(["reading 2", "reading 2"]);
    expect(begun).toHaveLength(3);

    // Past the stale limit the last answer is too old to serve: the reader waits for the reading.
    await vi.advanceTimersByTimeAsync(maxAge * STALE_FACTOR);
    let late: OverviewSummary | null = null;
    void sharedOverview(db, maxAge, read).then((a) => (late = a));
    await vi.advanceTimersByTimeAsync(10 * STALE_WAIT_MS);
    expect(late).toBeNull();
    expect(begun).toHaveLength(3);
    begun[2].release(answer(3));
    await vi.advanceTimersByTimeAsync(0);
    expect(late!.totals.now).toBe("reading 3");
  });

  it("a reading slower than maxAge / DUTY_FACTOR keeps its answer fresh for DUTY_FACTOR times its time: readers never keep the database reading it back to back", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const db = {} as Db;
    const { begun, read } = heldReadings();
    const maxAge = 1_000;
    const took = 2_000;
    // A reader every 100 ms for a minute while every reading takes 2 s (as at the top of the hour of
    // a large fleet): the database reads the Overview at most a quarter of the time.
    let answered = 0;
    let answerAt: number | null = null;
    for (let now = 0; now < 60_000; now += 100) {
      void sharedOverview(db, maxAge, read);
      await vi.advanceTimersByTimeAsync(0);
      // A reading that began answers `took` later.
      if (answerAt === null && begun.length > answered) answerAt = now + took;
      if (answerAt !== null && now >= answerAt) {
        begun[answered].release(answer(answered + 1));
        answered++;
        answerAt = null;
      }
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(answered).toBeGreaterThan(2);
    expect((answered * took) / 60_000).toBeLessThanOrEqual(1 / DUTY_FACTOR + 0.05);
    // and a reader is served from the last answer meanwhile, without waiting on the database.
    let served: OverviewSummary | null = null;
    void sharedOverview(db, maxAge, read).then((a) => (served = a));
    await vi.advanceTimersByTimeAsync(STALE_WAIT_MS);
    expect(served).not.toBeNull();
  });

  it("a failed reading fails the readers waiting on it and is not kept: the next reader reads again", async () => {
    const db = {} as Db;
    const { begun, read } = heldReadings();
    const a = sharedOverview(db, 1_000, read);
    const b = sharedOverview(db, 1_000, read);
    await Promise.resolve();
    begun[0].fail(new Error("standby gone"));
    await expect(a).rejects.toThrow("standby gone");
    await expect(b).rejects.toThrow("standby gone");
    const c = sharedOverview(db, 1_000, read);
    await Promise.resolve();
    expect(begun).toHaveLength(2);
    begun[1].release(answer(2));
    expect((await c).totals.now).toBe("reading 2");
  });
});
