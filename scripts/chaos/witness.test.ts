import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkWitness, startWitness, type Witness } from "./witness";

// The witness's rules on hand-made histories (times in ms), and its receiver on a real socket.
describe("the chaos witness", () => {
  let w: Witness;
  beforeAll(async () => {
    w = await startWitness();
  });
  afterAll(() => w.close());

  it("records what arrives on the socket with its key and token", async () => {
    const res = await fetch(w.url, { method: "POST", headers: { "Idempotency-Key": "sk:1:a", "X-Fencing-Token": "2" }, body: "{}" });
    expect(res.status).toBe(200);
    expect(w.hits).toEqual([{ key: "sk:1:a", token: 2, at: expect.any(Number) }]);
    expect((await fetch(w.url, { method: "POST", body: "{}" })).status).toBe(400);
    expect(w.hits).toHaveLength(1);
  });

  it("finds missing slots, requests after a successor started, and repeats nothing explains", () => {
    const attempts = [
      { key: "k1", token: 1, startedAt: 0, previousOutcome: null },
      { key: "k1", token: 2, startedAt: 5000, previousOutcome: "lease_expired" },
      { key: "k2", token: 1, startedAt: 0, previousOutcome: null },
      { key: "k2", token: 2, startedAt: 3000, previousOutcome: "succeeded" },
    ];
    const hits = [
      { key: "k1", token: 1, at: 100 }, // before its successor: fine
      { key: "k1", token: 2, at: 5100 }, // explained: attempt 1 lost its lease
      { key: "k1", token: 1, at: 6000 }, // the zombie, after attempt 2 started, and a second call of attempt 1
      { key: "k2", token: 2, at: 3100 }, // attempt 1 had succeeded: unexplained
    ];
    const r = checkWitness(hits, attempts, [{ key: "k1", schedule: "s", slot: 0 }, { key: "k3", schedule: "s", slot: 60_000 }], 250);
    expect(r.missing).toEqual([{ schedule: "s", slot: new Date(60_000).toISOString() }]);
    expect(r.zombieRequests).toEqual([{ key: "k1", token: 1, arrived_ms_after_successor_started: 1000 }]);
    expect(r.unexplainedRepeats.map((x) => [x.key, x.token, x.why])).toEqual([
      ["k1", 1, "the same attempt called twice"],
      ["k2", 2, "the earlier attempt succeeded"],
    ]);
  });
});
