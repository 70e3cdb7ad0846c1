import { evaluateAlerts } from "../../lib/alerts/evaluate";
import { rollUpChartHours } from "../../lib/health/chart-hours";
import type { Config } from "../../lib/config";
import type { Db } from "../../lib/db/client";
import type { Logger } from "../../lib/log";
import { startLoop, type Loop } from "./loop";

export type AlertLoopOptions = {
  db: Db;
  log: Logger;
  config: Pick<Config, "alertIntervalSeconds" | "alertReminderMinutes" | "publicUrl">;
  /** Called when a pass recorded events, so the delivery loop sends them at once. */
  onEvents?: () => void;
};

/**
 * Evaluate the health rules every SLOTKEEPER_ALERT_INTERVAL_SECONDS on every worker, so alerts
 * fire with no browser open; the pass itself makes sure one worker evaluates at a time and one
 * event is recorded per transition (lib/alerts/evaluate.ts). The same loop rolls the charts' hourly
 * counts up (lib/health/chart-hours.ts), one worker at a time too: both are passes over what
 * changed since the last one.
 */
export function startAlertLoop(opts: AlertLoopOptions): Loop {
  const { db, log, config } = opts;
  return startLoop({
    name: "alerts:evaluate",
    intervalMs: config.alertIntervalSeconds * 1000,
    log,
    run: async () => {
      const r = await evaluateAlerts(db, { publicUrl: config.publicUrl, reminderSeconds: config.alertReminderMinutes * 60 });
      if (r.firing + r.resolved + r.reminders > 0) {
        log.info({ event: "alerts:transitions", firing: r.firing, resolved: r.resolved, reminders: r.reminders });
        opts.onEvents?.();
      }
      await rollUpChartHours(db);
    },
  });
}
