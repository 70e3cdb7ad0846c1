import { beforeAll, describe, expect, it } from "vitest";
import { evaluateAlerts } from "@/lib/alerts/evaluate";
import { collectMetrics } from "@/lib/metrics/collect";
import { parsePrometheusText, sampleValue, type Family } from "@/lib/metrics/parse-text";
import { promtoolCheckMetrics } from "@/lib/testing/promtool";
import { setClock } from "@/lib/testing/clock";
import { setupTestDatabase } from "@/lib/testing/db";
import { makeRun, makeSchedule } from "@/lib/testing/factories";

const t = setupTestDatabase({ poolSize: 4, reset: false, routes: true });
let metricsGet: (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
let overviewGet: typeof metricsGet;
let listGet: typeof metricsGet;
const ctx = { params: Promise.resolve({}) };

beforeAll(async () => {
  metricsGet = (await import("./route")).GET;
  overviewGet = (await import("../overview/route")).GET;
  listGet = (await import("../schedules/route")).GET;

  await setClock(t.pool, "2030-01-01T10:00:00Z");
  const ok = (await makeSchedule(t.db, { name: "ok", everySeconds: 300, createdAt: new Date("2030-01-01T09:00:00Z") })).id;
  await makeRun(t.db, { scheduleId: ok, scheduledFor: new Date("2030-01-01T09:50:00Z"), state: "done", startedAt: new Date("2030-01-01T09:50:01Z"), finishedAt: new Date("2030-01-01T09:58:40Z") });
  // Started in the last 5 minutes: claim lateness 2 s and 1 s (a retry), start lateness 2 s.
  await makeRun(t.db, { scheduleId: ok, scheduledFor: new Date("2030-01-01T09:59:00Z"), state: "running", startedAt: new Date("2030-01-01T09:59:02Z"), attempts: 1 });
  await makeRun(t.db, { scheduleId: ok, scheduledFor: new Date("2030-01-01T09:58:00Z"), state: "done", runAfter: new Date("2030-01-01T09:58:30Z"), startedAt: new Date("2030-01-01T09:58:31Z"), finishedAt: new Date("2030-01-01T09:58:40Z"), attempts: 2 });
  const failing = (await makeSchedule(t.db, { name: "failing", everySeconds: 300, createdAt: new Date("2030-01-01T09:00:00Z") })).id;
  await makeRun(t.db, { scheduleId: failing, scheduledFor: new Date("2030-01-01T09:50:00Z"), state: "dead", finishedAt: new Date("2030-01-01T09:51:00Z"), attempts: 6 });
  await makeRun(t.db, { scheduleId: failing, scheduledFor: new Date("2030-01-01T09:55:00Z"), state: "done", finishedAt: new Date("2030-01-01T09:55:10Z") });
  const slow = (await makeSchedule(t.db, { name: "slow", everySeconds: 300, createdAt: new Date("2030-01-01T09:00:00Z") })).id;
  await makeRun(t.db, { scheduleId: slow, scheduledFor: new Date("2030-01-01T09:50:00Z"), state: "pending" });
  await makeRun(t.db, { scheduleId: slow, scheduledFor: new Date("2030-01-01T09:40:00Z"), state: "skipped" });
  await makeRun(t.db, { scheduleId: slow, scheduledFor: new Date("2030-01-01T09:35:00Z"), state: "done", finishedAt: new Date("2030-01-01T09:59:00Z") });
  await makeSchedule(t.db, { name: "never", everySeconds: 300, createdAt: new Date("2030-01-01T09:00:00Z") });
  await makeSchedule(t.db, { name: "paused", everySeconds: 300, enabled: false });
  await t.pool.query("INSERT INTO workers (id, hostname, pid, concurrency, last_heartbeat_at) VALUES ('w1', 'h', 1, 10, sk_now()), ('w2', 'h', 2, 10, sk_now() - interval '5 minutes')");
  // The counts by status are the alert pass's, as the workers' alert loop keeps them.
  expect(await evaluateAlerts(t.db, { publicUrl: "http://localhost", reminderSeconds: 0 })).toMatchObject({ evaluated: true, checked: 5 });
});

async function scrape(env: Record<string, string> = {}): Promise<Map<string, Family>> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const res = await metricsGet(new Request("http://localhost/api/metrics"), ctx);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    return parsePrometheusText(await res.text());
  } finally {
    for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
}

/** The Overview's totals and counts, and every schedule with its health from the console's list. */
async function overviewSchedules() {
  const overview = (await (await overviewGet(new Request("http://localhost/api/overview"), ctx)).json()) as {
    totals: { pending: number; running: number; dead: number; workersAlive: number };
    statusCounts: Record<string, number>;
    statusAsOf: string | null;
    notEvaluated: number;
  };
  const list = (await (await listGet(new Request("http://localhost/api/schedules?limit=500"), ctx)).json()) as {
    schedules: { name: string; sinceLastSuccessSeconds: number | null; deadRuns: number; oldestPendingAgeSeconds: number | null; status: string }[];
  };
  return { ...overview, schedules: list.schedules };
}

describe("GET /api/metrics", () => {
  it("parses as Prometheus text, passes promtool, and aggregates what the Overview lists", async () => {
    const res = await metricsGet(new Request("http://localhost/api/metrics"), ctx);
    const text = await res.text();
    expect(promtoolCheckMetrics(text)).toEqual({ status: 0, output: "" });
    const m = parsePrometheusText(text);
    const overview = await overviewSchedules();
    expect(overview.schedules.map((s) => s.name)).toEqual(["failing", "never", "ok", "paused", "slow"]);
    expect(Object.fromEntries(overview.schedules.map((s) => [s.name, s.status]))).toEqual({ failing: "failing", never: "late", ok: "healthy", paused: "paused", slow: "backlogged" });
    // By default no series names a schedule: the counts by status and handler add up to the Overview's list.
    expect([...m.values()].flatMap((f) => f.samples).filter((x) => "schedule" in x.labels)).toEqual([]);
    for (const status of ["healthy", "late", "failing", "backlogged", "paused"]) {
      const counted = m.get("slotkeeper_schedules")!.samples.filter((x) => x.labels.status === status).reduce((a, x) => a + x.value, 0);
      expect(counted, status).toBe(overview.schedules.filter((s) => s.status === status).length);
      expect(overview.statusCounts[status], status).toBe(counted);
    }
    expect(sampleValue(m, "slotkeeper_schedules", { status: "healthy", handler: "noop" })).toBe(1);
    expect(sampleValue(m, "slotkeeper_schedules_rule_holding", { rule: "failing" })).toBe(1);
    expect(sampleValue(m, "slotkeeper_schedules_rule_holding", { rule: "late" })).toBe(1);
    expect(sampleValue(m, "slotkeeper_schedules_rule_holding", { rule: "backlogged" })).toBe(1);
    // No live worker serves noop (w1 registered no handlers): slow's run from 09:50 has waited past its stated lateness. Nothing runs stuck.
    expect(sampleValue(m, "slotkeeper_schedules_rule_holding", { rule: "unserved" })).toBe(1);
    expect(sampleValue(m, "slotkeeper_schedules_rule_holding", { rule: "stuck" })).toBe(0);
    // As of the pass in beforeAll, at the frozen clock; every schedule judged.
    expect(sampleValue(m, "slotkeeper_schedule_status_as_of_seconds")).toBe(Date.parse("2030-01-01T10:00:00Z") / 1000);
    expect(overview.statusAsOf).toBe("2030-01-01T10:00:00.000Z");
    expect(sampleValue(m, "slotkeeper_schedules_not_evaluated")).toBe(0);
    expect(overview.notEvaluated).toBe(0);
    // Lateness histograms are cumulative counters of what workers did: served by the workers, not here.
    expect(m.has("slotkeeper_start_lateness_seconds")).toBe(false);

    expect(sampleValue(m, "slotkeeper_runs", { state: "pending" })).toBe(overview.totals.pending);
    expect(sampleValue(m, "slotkeeper_runs", { state: "running" })).toBe(overview.totals.running);
    expect(sampleValue(m, "slotkeeper_runs", { state: "dead" })).toBe(overview.totals.dead);
    expect(sampleValue(m, "slotkeeper_runs", { state: "done" })).toBe(4);
    expect(sampleValue(m, "slotkeeper_runs", { state: "skipped" })).toBe(1);
    expect(sampleValue(m, "slotkeeper_workers_alive")).toBe(overview.totals.workersAlive);
    expect(overview.totals.workersAlive).toBe(1);
  });

  it("with SLOTKEEPER_METRICS_PER_SCHEDULE=worst:2 reports the two worst schedules one by one, with the Overview's numbers", async () => {
    const m = await scrape({ SLOTKEEPER_METRICS_PER_SCHEDULE: "worst:2" });
    const named = new Set(m.get("slotkeeper_schedule_dead_runs")!.samples.map((x) => x.labels.schedule));
    // Failing before late before backlogged.
    expect([...named].sort()).toEqual(["failing", "never"]);
    const overview = await overviewSchedules();
    for (const s of overview.schedules.filter((x) => named.has(x.name))) {
      const l = { schedule: s.name };
      expect(sampleValue(m, "slotkeeper_schedule_since_last_success_seconds", l)).toBe(s.sinceLastSuccessSeconds ?? undefined);
      expect(sampleValue(m, "slotkeeper_schedule_dead_runs", l)).toBe(s.deadRuns);
      expect(sampleValue(m, "slotkeeper_schedule_oldest_pending_age_seconds", l)).toBe(s.oldestPendingAgeSeconds ?? 0);
      const firing = ["failing", "late", "backlogged"].filter((rule) => sampleValue(m, "slotkeeper_schedule_rule_firing", { ...l, rule }) === 1);
      expect(firing[0]).toBe(s.status);
    }
  });

  it("with SLOTKEEPER_METRICS_PER_SCHEDULE=tag:critical reports the tagged schedules only", async () => {
    await t.pool.query("UPDATE schedules SET tags = ARRAY['critical'] WHERE name IN ('ok', 'slow')");
    try {
      const m = await scrape({ SLOTKEEPER_METRICS_PER_SCHEDULE: "tag:critical" });
      expect(m.get("slotkeeper_schedule_enabled")!.samples.map((x) => x.labels.schedule).sort()).toEqual(["ok", "slow"]);
      expect(sampleValue(m, "slotkeeper_schedule_since_last_success_seconds", { schedule: "ok" })).toBe(80);
      expect(sampleValue(m, "slotkeeper_schedule_oldest_pending_age_seconds", { schedule: "slow" })).toBe(600);
    } finally {
      await t.pool.query("UPDATE schedules SET tags = '{}'");
    }
  });

  it("counts a schedule made since the last alert pass as not evaluated, in no status, until the next pass judges it", async () => {
    const before = await scrape();
    const total = (m: Map<string, Family>) => m.get("slotkeeper_schedules")!.samples.reduce((a, x) => a + x.value, 0);
    await makeSchedule(t.db, { name: "fresh", everySeconds: 300, enabled: false });
    try {
      const m = await scrape();
      expect(sampleValue(m, "slotkeeper_schedules_not_evaluated")).toBe(1);
      expect(total(m)).toBe(total(before));
      expect((await overviewSchedules()).notEvaluated).toBe(1);
      await evaluateAlerts(t.db, { publicUrl: "http://localhost", reminderSeconds: 0 });
      const after = await scrape();
      expect(sampleValue(after, "slotkeeper_schedules_not_evaluated")).toBe(0);
      expect(sampleValue(after, "slotkeeper_schedules", { status: "paused", handler: "noop" })).toBe(2);
    } finally {
      await t.pool.query("DELETE FROM schedules WHERE name = 'fresh'");
      await evaluateAlerts(t.db, { publicUrl: "http://localhost", reminderSeconds: 0 });
    }
  });

  it("reads done and skipped from planner statistics on a large table, matching the exact counts once analysed", async () => {
    await t.pool.query("ANALYZE runs");
    const exact = await collectMetrics(t.db);
    const estimated = await collectMetrics(t.db, { estimateAboveRows: 0 });
    expect(exact.runs.find((r) => r.state === "done")).toEqual({ state: "done", count: 4, estimated: false });
    expect(estimated.runs.find((r) => r.state === "done")).toEqual({ state: "done", count: 4, estimated: true });
    expect(estimated.runs.find((r) => r.state === "skipped")).toEqual({ state: "skipped", count: 1, estimated: true });
  });
});
