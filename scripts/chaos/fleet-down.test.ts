// When no worker could claim, worked by hand.
import { describe, expect, it } from "vitest";
import type { FaultEvent } from "./faults";
import { fleetDownIntervals, waitJudgedFrom, workerUpIntervals } from "./fleet-down";

const f = (kind: FaultEvent["kind"], workerId: string, at: number, until?: number): FaultEvent => ({ kind, workerId, at, until, held: [] });

describe("the fleet down", () => {
  // a: up from 0, frozen 10–16, killed at 30; b: up from 2, silenced 12–24; c (b's replacement after a kill at 14): up from 18.
  const starts = new Map([["a", 0], ["b", 2], ["c", 18]]);
  const faults = [f("sigstop", "a", 10, 16), f("silent", "b", 12, 24), f("kill9", "a", 30)];
  const up = workerUpIntervals(starts, faults, 40);

  it("a worker is up from its start until a fault, and again after a freeze or a silence ends", () => {
    expect(up.get("a")).toEqual([[0, 10], [16, 30]]);
    expect(up.get("b")).toEqual([[2, 12], [24, 40]]);
    expect(up.get("c")).toEqual([[18, 40]]);
  });

  it("the fleet is down where no worker is up", () => {
    expect(fleetDownIntervals(up, 0, 40)).toEqual([[12, 16]]);
    expect(fleetDownIntervals(new Map([["a", [[5, 8]] as [number, number][]]]), 0, 10)).toEqual([[0, 5], [8, 10]]);
  });

  it("a wait across a stretch with no worker up is judged from its end", () => {
    const down = fleetDownIntervals(up, 0, 40);
    expect(waitJudgedFrom(down, 11, 19)).toBe(16); // due while a was up; nobody from 12 to 16
    expect(waitJudgedFrom(down, 5, 9)).toBe(5); // no stretch inside: as due
    expect(waitJudgedFrom(down, 13, 14)).toBe(14); // started before anyone was back: no wait judged
    expect(waitJudgedFrom(down, 20, 25)).toBe(20); // after the stretch
  });
});
