import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPartitionSettler } from "./settle";

describe("createPartitionSettler", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("settles a partition before its first claim, not on every pass; again only after an absence longer than the threshold", async () => {
    const settled: number[][] = [];
    const s = createPartitionSettler(async (p) => void settled.push(p), 3_000);
    await s.before([0, 1, 2]);
    await s.before([0, 1, 2]);
    expect(settled).toEqual([[0, 1, 2]]);
    // 3 joins (newly held or orphaned); 2 drops out.
    await s.before([0, 1, 3]);
    expect(settled).toEqual([[0, 1, 2], [3]]);
    // 2 comes back within 3 s: no gap in which runs piled up unclaimed.
    vi.advanceTimersByTime(2_000);
    await s.before([0, 1, 2, 3]);
    expect(settled).toHaveLength(2);
    // 3 leaves for longer than 3 s: settled again when it returns. Every partition held: nothing to settle.
    await s.before([0, 1, 2]);
    vi.advanceTimersByTime(3_001);
    await s.before([0, 1, 2, 3]);
    expect(settled).toEqual([[0, 1, 2], [3], [3]]);
    await s.before(null);
    expect(settled).toHaveLength(3);
  });

  it("settles again on the next pass when settling failed", async () => {
    let fail = true;
    const calls: number[][] = [];
    const s = createPartitionSettler(async (p) => {
      calls.push(p);
      if (fail) throw new Error("database away");
    }, 3_000);
    await expect(s.before([4])).rejects.toThrow("database away");
    fail = false;
    await s.before([4]);
    expect(calls).toEqual([[4], [4]]);
  });
});
