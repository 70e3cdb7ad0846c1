import type { Db } from "../../lib/db/client";
import type { Logger } from "../../lib/log";
import { deleteExpiredOidcLogins } from "../../lib/auth/oidc-logins";
import { deleteExpiredSessions } from "../../lib/auth/sessions";
import { deleteStaleLoginFailures } from "../../lib/auth/throttle";
import { deleteExpiredRuns, type RetentionDefaults } from "../../lib/runs/retention";
import { startLoop, type Loop } from "./loop";

/** A full sweep starts this often; between statements the sweep pauses so it never crowds the hot path. */
export const RETENTION_SWEEP_INTERVAL_MS = 60_000;
export const RETENTION_PAUSE_MS = 200;
/** Under a backlog that never ends, the sweep still takes one step this often, so runs cannot pile up for ever. */
export const RETENTION_MAX_YIELD_MS = 30_000;

export type RetentionLoopOptions = {
  db: Db;
  log: Logger;
  policy: RetentionDefaults;
  /** Only the worker for which this returns true sweeps (the holder of partition 0). */
  isSweeper: () => boolean;
  /**
   * True while this worker is working through a backlog (its claims come back full). The sweep
   * then waits before each statement, up to `maxYieldMs`: deleting is never urgent, and at the top
   * of the hour every statement it sends takes database time from the claims.
   */
  busy?: () => boolean;
  intervalMs?: number;
  pauseMs?: number;
  maxYieldMs?: number;
};

/**
 * Sweep expired runs (and the expired rows of sign-in: console sessions, unfinished OpenID Connect
 * sign-ins, failed-sign-in counts past their window): one statement (≤ 1,000 rows) at a time with a pause between, a whole sweep
 * per interval, only on the worker that holds partition 0 (an advisory lock guards hand-overs), and
 * held back while the worker has a backlog to claim.
 */
export function startRetentionLoop(opts: RetentionLoopOptions): Loop {
  const pauseMs = opts.pauseMs ?? RETENTION_PAUSE_MS;
  return startLoop({
    name: "retention:sweep",
    intervalMs: opts.intervalMs ?? RETENTION_SWEEP_INTERVAL_MS,
    log: opts.log,
    run: async (signal) => {
      const maxYieldMs = opts.maxYieldMs ?? RETENTION_MAX_YIELD_MS;
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      let cursor = 0;
      let total = 0;
      while (!signal.aborted && opts.isSweeper()) {
        for (let waited = 0; opts.busy?.() && waited < maxYieldMs && !signal.aborted; waited += pauseMs) await sleep(pauseMs);
        if (signal.aborted) break;
        const pass = await deleteExpiredRuns(opts.db, { ...opts.policy, afterScheduleId: cursor });
        total += pass.deleted;
        cursor = pass.nextScheduleId;
        if (!pass.ran || pass.sweepDone) break;
        await sleep(pauseMs);
      }
      if (total > 0) opts.log.info({ event: "retention:sweep:done", deleted: total });
      // Sign-in rows that expired by the database clock, at most 1,000 of each a sweep: console
      // sessions (lib/auth/sessions.ts), OpenID Connect sign-ins never finished
      // (lib/auth/oidc-logins.ts) and failed-sign-in counts past the window (lib/auth/throttle.ts).
      if (!signal.aborted && opts.isSweeper()) {
        const sessions = await deleteExpiredSessions(opts.db);
        if (sessions > 0) opts.log.info({ event: "retention:sessions:done", deleted: sessions });
        const oidcLogins = await deleteExpiredOidcLogins(opts.db);
        if (oidcLogins > 0) opts.log.info({ event: "retention:oidc_logins:done", deleted: oidcLogins });
        const loginFailures = await deleteStaleLoginFailures(opts.db);
        if (loginFailures > 0) opts.log.info({ event: "retention:login_failures:done", deleted: loginFailures });
      }
    },
  });
}
