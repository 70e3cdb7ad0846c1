import type { Logger } from "../../lib/log";
import type { Runner } from "../runner";
import { startLoop, type Loop } from "./loop";

/**
 * Claim due runs every poll interval (at once again while claims fill every free slot), and at the
 * instant the next pending run comes due when that is sooner than the next poll.
 *
 * An early wake is taken at most once in a row: when the pass it brings fills no batch, the next
 * sleep is a whole interval. That bounds the passes under a clock that does not advance (a frozen
 * test clock: a run 1 ms ahead stays 1 ms ahead) to two per interval instead of one per ms.
 */
export function startClaimLoop(o: { runner: Runner; pollIntervalMs: number; log: Logger }): Loop {
  let wokeEarly = false;
  return startLoop({
    name: "run:claim",
    intervalMs: o.pollIntervalMs,
    log: o.log,
    run: async () => {
      if (await o.runner.claimPass()) {
        wokeEarly = false;
        return true;
      }
      if (wokeEarly) {
        wokeEarly = false;
        return;
      }
      const inMs = await o.runner.nextDueInMs();
      if (inMs === null || inMs >= o.pollIntervalMs) return;
      wokeEarly = true;
      return inMs;
    },
  });
}
