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
    // A pass as the runner makes it: settle, then the claim succeeds.
    const pass = async (parts: number[] | null) => {
      await s.before(parts);
      s.claimed(parts);
    };
    await pass([0, 1, 2]);
    await pass([0, 1, 2]);
    expect(settled).toEqual([[0, 1, 2]]);
    // 3 joins (newly held or orphaned); 2 drops out.
    await pass([0, 1, 3]);
    expect(settled).toEqual([[0, 1, 2], [3]]);
    // 2 comes back within 3 s: no gap in which runs piled up unclaimed.
    vi.advanceTimersByTime(2_000);
    await pass([0, 1, 2, 3]);
    expect(settled).toHaveLength(2);
    // 3 leaves for longer than 3 s: settled again when it returns. Every partition held: nothing to settle.
    await pass([0, 1, 2]);
    vi.advanceTimersByTime(3_001);
    await pass([0, 1, 2, 3]);
    expect(settled).toEqual([[0, 1, 2], [3], [3]]);
    await pass(null);
    expect(settled).toHaveLength(3);
  });

  it("settles every partition again after claims failed for longer than the threshold (the database was away)", async () => {
    const settled: number[][] = [];
    const s = createPartitionSettler(async (p) => void settled.push(p), 3_000);
    await s.before([0, 1]);
    s.claimed([0, 1]);
    // The database goes away: each pass settles nothing new, and its claim fails (no claimed()).
    for (let k = 0; k < 4; k++) {
      vi.advanceTimersByTime(1_000);
      await s.before([0, 1]);
    }
    expect(settled).toEqual([[0, 1], [0, 1]]);
    // Settled once the absence passed 3 s; the claim after it succeeds: no more settling.
    s.claimed([0, 1]);
    vi.advanceTimersByTime(1_000);
    await s.before([0, 1]);
    expect(settled).toHaveLength(2);
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
