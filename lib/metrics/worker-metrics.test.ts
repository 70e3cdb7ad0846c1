import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runClockFrom } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND } from "../testing/factories";
import { freePort, promtoolCheckMetrics } from "../testing/promtool";
import { startReceiver } from "../testing/receiver";
import { startWorkers } from "../testing/spawn";
import { waitUntil } from "../testing/wait";
import { parsePrometheusText, sampleValue } from "./parse-text";

// A real worker process serving its own /metrics. The oracle is outside the product: the receiver
// counts the handler calls, and the lateness buckets follow from the slots this test made.
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase();

describe("a worker's own /metrics", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it("passes promtool, and its counters and lateness histograms grow with what the worker did", async () => {
    await runClockFrom(t.pool, T0);
    const port = await freePort();
    await startWorkers(t.url, ["metrics-1"], { SLOTKEEPER_METRICS_PORT: String(port) });
    const scrape = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/plain");
      return res.text();
    };
    const before = await scrape();
    expect(promtoolCheckMetrics(before)).toEqual({ status: 0, output: "" });
    expect(sampleValue(parsePrometheusText(before), "slotkeeper_worker_runs_claimed_total")).toBe(0);

    const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "http", payload: { url: `${receiver.url}/run` } });
    // Round 1: three slots 100 s before the clock and two 500 s before: started at least that late.
    await makeRuns(t.db, s.id, [100, 101, 102, 500, 501].map((sec) => ({ scheduledFor: new Date(T0.getTime() - sec * 1000) })));
    await waitUntil(() => receiver.received.length >= 5, 60_000, "5 requests at the receiver");
    const settled = (n: number) => async () => (await t.pool.query("SELECT count(*)::int AS n FROM runs WHERE state = 'done'")).rows[0].n === n;
    await waitUntil(settled(5), 60_000, "5 done runs");
    const first = parsePrometheusText(await scrape());
    const calls1 = receiver.received.length;
    expect(calls1).toBe(5);
    expect(sampleValue(first, "slotkeeper_worker_runs_claimed_total")).toBe(calls1);
    expect(sampleValue(first, "slotkeeper_worker_attempts_started_total", { handler: "http" })).toBe(calls1);
    expect(sampleValue(first, "slotkeeper_worker_attempts_finished_total", { outcome: "succeeded" })).toBe(calls1);
    expect(first.get("slotkeeper_start_lateness_seconds")?.type).toBe("histogram");
    expect(sampleValue(first, "slotkeeper_start_lateness_seconds_count")).toBe(5);
    expect(sampleValue(first, "slotkeeper_start_lateness_seconds_bucket", { le: "60" })).toBe(0);
    // The clock runs from T0, so the 100 s slots start within 200 s of it and the 500 s ones within 400 s.
    expect(sampleValue(first, "slotkeeper_start_lateness_seconds_bucket", { le: "300" })).toBe(3);
    expect(sampleValue(first, "slotkeeper_start_lateness_seconds_bucket", { le: "900" })).toBe(5);
    expect(sampleValue(first, "slotkeeper_start_lateness_seconds_sum")).toBeGreaterThanOrEqual(100 + 101 + 102 + 500 + 501);
    expect(sampleValue(first, "slotkeeper_claim_lateness_seconds_count")).toBe(5);

    // Round 2: more runs. Nothing falls: every counter and bucket is at least what it was, and the
    // totals match the receiver again.
    await makeRuns(t.db, s.id, [10, 11, 12, 13].map((sec) => ({ scheduledFor: new Date(T0.getTime() - sec * 1000) })));
    await waitUntil(() => receiver.received.length >= 9, 60_000, "9 requests at the receiver");
    await waitUntil(settled(9), 60_000, "9 done runs");
    const text = await scrape();
    expect(promtoolCheckMetrics(text)).toEqual({ status: 0, output: "" });
    const second = parsePrometheusText(text);
    expect(sampleValue(second, "slotkeeper_worker_runs_claimed_total")).toBe(receiver.received.length);
    expect(sampleValue(second, "slotkeeper_worker_attempts_finished_total", { outcome: "succeeded" })).toBe(receiver.received.length);
    for (const family of ["slotkeeper_start_lateness_seconds", "slotkeeper_claim_lateness_seconds"]) {
      for (const sample of first.get(family)!.samples) {
        expect(sampleValue(second, sample.name, sample.labels), `${sample.name} ${JSON.stringify(sample.labels)}`).toBeGreaterThanOrEqual(sample.value);
      }
    }
    expect(sampleValue(second, "slotkeeper_start_lateness_seconds_count")).toBe(9);
    expect(sampleValue(second, "slotkeeper_start_lateness_seconds_bucket", { le: "900" })).toBe(9);

    // Only /metrics is served.
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(404);
  }, 180_000);
});
