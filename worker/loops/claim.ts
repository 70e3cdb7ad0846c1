import type { Logger } from "../../lib/log";
import type { Runner } from "../runner";
import { startLoop, type Loop } from "./loop";

/** Claim due runs every poll interval (at once again while claims fill every free slot). */
export function startClaimLoop(o: { runner: Runner; pollIntervalMs: number; log: Logger }): Loop {
  return startLoop({ name: "run:claim", intervalMs: o.pollIntervalMs, log: o.log, run: () => o.runner.claimPass() });
}
