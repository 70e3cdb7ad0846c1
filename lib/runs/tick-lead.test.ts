import { describe, expect, it } from "vitest";
import { setupTestDatabase } from "../testing/db";
import { makeSchedule } from "../testing/factories";
import { materialisedLeadSeconds, mayDeferMaterialising } from "./tick-lead";

const NOW = new Date("2031-02-03T04:05:06Z");
const t = setupTestDatabase({ clock: NOW });
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

describe("materialisedLeadSeconds", () => {
  it("is the earliest next slot of an enabled, live schedule in the partitions, less the database clock", async () => {
    // [partition, next slot in seconds from NOW, enabled, deleted]
    const fleet: [number, number, boolean, boolean][] = [
      [0, 95, true, false],
      [0, 40, false, false],
      [1, 70, true, false],
      [1, 10, true, true],
      [2, -30, true, false],
      [3, 300, true, false],
    ];
    for (const [partition, s, enabled, deleted] of fleet) {
      await makeSchedule(t.db, { partition, everySeconds: 60, nextSlotAt: at(s), enabled, deletedAt: deleted ? at(-1) : null });
    }
    // The oracle: the same minimum by brute force over the list above.
    const expected = (parts: number[] | null) => {
      const leads = fleet.filter(([p, , enabled, deleted]) => enabled && !deleted && (parts === null || parts.includes(p))).map(([, s]) => s);
      return leads.length === 0 ? null : Math.min(...leads);
    };
    for (const parts of [[0], [1], [0, 1], [0, 1, 3], [2, 3], [4], null]) {
      expect(await materialisedLeadSeconds(t.db, parts)).toBe(expected(parts));
    }
  });

  it("lets a backlogged tick wait only while it is at least half its horizon ahead", async () => {
    await makeSchedule(t.db, { partition: 5, everySeconds: 60, nextSlotAt: at(60) });
    expect(await mayDeferMaterialising(t.db, [5], 120)).toBe(true);
    expect(await mayDeferMaterialising(t.db, [5], 121)).toBe(false);
    // Nothing enabled there, or no partition held: nothing to materialise.
    expect(await mayDeferMaterialising(t.db, [6], 120)).toBe(true);
    expect(await mayDeferMaterialising(t.db, [], 120)).toBe(true);
  });
});
