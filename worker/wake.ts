import pg from "pg";
import type { Logger } from "../lib/log";
import { RUNS_CHANNEL } from "../lib/runs/requeue";

/**
 * LISTEN on the runs channel and call `onNotify` when someone says a run became due (run-now,
 * re-queue). Purely an optimisation: the claim loop polls anyway, so a lost connection only
 * means waking later; it reconnects in the background.
 */
export function listenForDueRuns(url: string, onNotify: () => void, log: Logger, opts: { queryTimeoutMs?: number } = {}): { stop: () => Promise<void> } {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let ping: NodeJS.Timeout | undefined;
  // A LISTEN connection only receives: on a silent network it would wait for ever. It is pinged
  // every query timeout and, when a ping goes unanswered for as long, dropped and opened again.
  const timeoutMs = opts.queryTimeoutMs ?? 10_000;

  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: url, application_name: "slotkeeper:worker:listen", connectionTimeoutMillis: 5_000, query_timeout: timeoutMs, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    client = c;
    let gone = false;
    const again = () => {
      if (gone) return;
      gone = true;
      clearInterval(ping);
      c.removeAllListeners("notification");
      void c.end().catch(() => {});
      if (!stopped && client === c) retry = setTimeout(() => void connect(), 2_000);
    };
    c.on("error", again);
    c.on("end", again);
    c.on("notification", () => onNotify());
    try {
      await c.connect();
      await c.query(`LISTEN ${RUNS_CHANNEL}`);
      // Wake once after (re)connecting: a notification may have been missed while away.
      onNotify();
      ping = setInterval(() => {
        c.query("SELECT 1").catch((err: unknown) => {
          log.warn({ event: "worker:listen:silent", message: err instanceof Error ? err.message : String(err) });
          again();
        });
      }, timeoutMs);
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
      clearInterval(ping);
      await client?.end().catch(() => {});
    },
  };
}
