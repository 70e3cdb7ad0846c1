import type { Db } from "../../lib/db/client";
import type { Logger } from "../../lib/log";
import { resumeDueSchedules } from "../../lib/schedules/auto-resume";
import { startLoop, type Loop } from "./loop";

/** How often a worker looks for paused schedules whose resume time passed. */
export const AUTO_RESUME_INTERVAL_MS = 5_000;

/** Resume paused schedules whose `resumeAt` passed (lib/schedules/auto-resume.ts). */
export function startAutoResumeLoop(opts: { db: Db; log: Logger; intervalMs?: number }): Loop {
  return startLoop({
    name: "schedules:auto-resume",
    intervalMs: opts.intervalMs ?? AUTO_RESUME_INTERVAL_MS,
    log: opts.log,
    run: async () => {
      const { resumed } = await resumeDueSchedules(opts.db);
      if (resumed.length > 0) opts.log.info({ event: "schedules:auto-resume", resumed });
      return resumed.length >= 100;
    },
  });
}
