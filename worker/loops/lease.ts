import type { Logger } from "../../lib/log";
import type { Runner } from "../runner";
import { startLoop, type Loop } from "./loop";

/**
 * How often the lease loop looks for leases due for renewal. Each lease is renewed every third of
 * its length; this only sets how promptly that happens.
 */
export const LEASE_CHECK_MS = 250;

/** Renew the worker's leases in bulk (each every lease/3); a failed pass leaves the local deadlines to act. */
export function startLeaseLoop(o: { runner: Runner; log: Logger }): Loop {
  return startLoop({ name: "run:heartbeat", intervalMs: LEASE_CHECK_MS, maxBackoffMs: LEASE_CHECK_MS * 4, log: o.log, run: () => o.runner.heartbeatPass() });
}
