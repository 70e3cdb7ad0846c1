import pg from "pg";
import type { Logger } from "../lib/log";
import { RUNS_CHANNEL } from "../lib/runs/requeue";

/**
 * LISTEN on the runs channel and call `onNotify` when someone says a run became due (run-now,
 * re-queue). Purely an optimisation: the claim loop polls anyway, so a lost connection only
 * means waking later; it reconnects in the background.
 */
export function listenForDueRuns(url: string, onNotify: () => void, log: Logger): { stop: () => Promise<void> } {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: url, application_name: "slotkeeper:worker:listen", connectionTimeoutMillis: 5_000 });
    client = c;
    const again = () => {
      c.removeAllListeners("notification");
      void c.end().catch(() => {});
      if (!stopped && client === c) retry = setTimeout(() => void connect(), 2_000);
    };
    c.on("error", again);
    c.on("notification", () => onNotify());
    try {
      await c.connect();
      await c.query(`LISTEN ${RUNS_CHANNEL}`);
    } catch (err) {
      log.debug({ event: "worker:listen:error", err });
      again();
    }
  };
  void connect();

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
