/**
 * Render a MetricsSnapshot as Prometheus text with prom-client, in a fresh Registry per scrape:
 * every value comes from the database at scrape time, so nothing is kept between scrapes and
 * every web process reports the same numbers. Only gauges: counters and histograms of what workers
 * did live in each worker (lib/metrics/worker-metrics.ts), where they only grow.
 */
import { Gauge, Registry } from "prom-client";
import { HEALTH_RULE_NAMES, type MetricsSnapshot } from "./collect";

/** The Prometheus text for one scrape, and its content type. */
export async function renderMetrics(s: MetricsSnapshot): Promise<{ text: string; contentType: string }> {
  const registry = new Registry();
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers: [registry] });

  const byStatus = gauge(
    "slotkeeper_schedules",
    "Live schedules by health status (healthy, late, failing, backlogged, paused) and handler, as the last alert pass judged them (see slotkeeper_schedule_status_as_of_seconds).",
    ["status", "handler"],
  );
  for (const e of s.schedulesByStatus) byStatus.set({ status: e.status, handler: e.handler }, e.count);
  const holding = gauge(
    "slotkeeper_schedules_rule_holding",
    "Live schedules for which the built-in health rule (late, failing, backlogged, unserved, stuck) held at the last alert pass.",
    ["rule"],
  );
  for (const r of s.rulesHolding) holding.set({ rule: r.rule }, r.count);
  gauge("slotkeeper_schedules_not_evaluated", "Live schedules no alert pass has judged yet (made since the last one): in neither slotkeeper_schedules nor slotkeeper_schedules_rule_holding.").set(
    s.schedulesNotEvaluated,
  );
  gauge(
    "slotkeeper_schedule_status_as_of_seconds",
    "Unix time (database clock) the last finished alert pass started at: slotkeeper_schedules and slotkeeper_schedules_rule_holding are at least that recent. 0 before the first pass.",
  ).set(s.statusAsOf === null ? 0 : s.statusAsOf.getTime() / 1000);

  // Per schedule: only the schedules SLOTKEEPER_METRICS_PER_SCHEDULE selects (none by default).
  const since = gauge("slotkeeper_schedule_since_last_success_seconds", "Seconds since the schedule's last successful run; absent when it never succeeded.", ["schedule"]);
  const dead = gauge("slotkeeper_schedule_dead_runs", "Runs of the schedule that exhausted their attempts (dead) and need a person.", ["schedule"]);
  const pending = gauge("slotkeeper_schedule_oldest_pending_age_seconds", "Seconds the schedule's oldest due pending run has waited since its slot; 0 when none waits.", ["schedule"]);
  const age = gauge("slotkeeper_schedule_age_seconds", "Seconds since the schedule was created (late is judged by this when it never succeeded).", ["schedule"]);
  const lateAfter = gauge("slotkeeper_schedule_late_after_seconds", "Since-last-success threshold above which the schedule is late.", ["schedule"]);
  const backlogAfter = gauge("slotkeeper_schedule_backlog_after_seconds", "Oldest-pending-age threshold above which the schedule is backlogged.", ["schedule"]);
  const enabled = gauge("slotkeeper_schedule_enabled", "1 when the schedule is enabled, 0 when paused.", ["schedule"]);
  const rule = gauge("slotkeeper_schedule_rule_firing", "1 when the built-in health rule (late, failing, backlogged, unserved, stuck) holds for the schedule.", ["schedule", "rule"]);
  for (const { name, enabled: on, health: h } of s.schedules) {
    const l = { schedule: name };
    if (h.sinceLastSuccessSeconds !== null) since.set(l, h.sinceLastSuccessSeconds);
    dead.set(l, h.deadRuns);
    pending.set(l, h.oldestPendingAgeSeconds ?? 0);
    age.set(l, h.ageSeconds);
    if (h.lateAfterSeconds !== null) lateAfter.set(l, h.lateAfterSeconds);
    if (h.backlogAfterSeconds !== null) backlogAfter.set(l, h.backlogAfterSeconds);
    enabled.set(l, on ? 1 : 0);
    for (const r of HEALTH_RULE_NAMES) rule.set({ ...l, rule: r }, h.rules[r] ? 1 : 0);
  }

  const runs = gauge(
    "slotkeeper_runs",
    "Runs by state. pending, running and dead are exact; done and skipped are planner estimates once the table is large (see slotkeeper_runs_estimated).",
    ["state"],
  );
  const estimated = gauge("slotkeeper_runs_estimated", "1 when slotkeeper_runs for this state is a statistics estimate rather than an exact count.", ["state"]);
  for (const r of s.runs) {
    runs.set({ state: r.state }, r.count);
    estimated.set({ state: r.state }, r.estimated ? 1 : 0);
  }

  gauge("slotkeeper_workers_alive", "Worker processes that heartbeated within the last 30 seconds.").set(s.workersAlive);
  const deliveries = gauge("slotkeeper_alert_deliveries", "Alert notifications waiting to be sent (pending) or given up on (failed).", ["state"]);
  deliveries.set({ state: "pending" }, s.deliveries.pending);
  deliveries.set({ state: "failed" }, s.deliveries.failed);

  return { text: await registry.metrics(), contentType: registry.contentType };
}
