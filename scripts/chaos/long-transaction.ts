// A long transaction beside the run: a connection of its own (not through the proxy) does
// `BEGIN; SELECT txid_current()` and stays open, so its xid holds back vacuum's horizon on every
// table while the workers claim, finish and tick. Reopened if the database crash ends it. The
// report measures claim lateness (first start minus due) of the slots due while it was open.
import pg from "pg";

/** One open stretch of the transaction, on this process's clock. */
export type LongTransaction = { from: number; to: number; xid: string; backendXminHeld: boolean };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Hold a transaction open from now until `until`; returns every stretch it was open. */
export async function holdLongTransaction(url: string, until: number, log: (l: string) => void): Promise<LongTransaction[]> {
  const out: LongTransaction[] = [];
  for (let i = 0; i < 20 && Date.now() < until - 1000; i++) {
    const c = new pg.Client({ connectionString: url, application_name: "slotkeeper:chaos-long-transaction", connectionTimeoutMillis: 5000 });
    c.on("error", () => {});
    const from = Date.now();
    let stretch: LongTransaction | undefined;
    try {
      await c.connect();
      await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
      const xid = String((await c.query<{ x: string }>("SELECT txid_current()::text AS x")).rows[0].x);
      stretch = { from, to: from, xid, backendXminHeld: false };
      out.push(stretch);
      log(`chaos: long transaction open (xid ${xid})`);
      while (Date.now() < until) {
        await sleep(Math.min(2000, Math.max(0, until - Date.now())));
        stretch.to = Date.now();
        // Still open, and still the oldest snapshot's holder: vacuum cannot remove what it might see.
        const r = await c.query<{ held: boolean }>("SELECT backend_xmin IS NOT NULL AS held FROM pg_stat_activity WHERE pid = pg_backend_pid()");
        stretch.backendXminHeld ||= r.rows[0]?.held === true;
      }
      await c.query("ROLLBACK");
    } catch {
      if (stretch) stretch.to = Date.now();
      await sleep(1000); // the database crash: open it again once the server is back
    } finally {
      await c.end().catch(() => {});
    }
  }
  return out;
}

/** Claim lateness (ms) of the slots that came due while a transaction was open (`dueAt` on the server's real clock). */
export function lagsDuring(stretches: LongTransaction[], lags: { dueAt: number; lag: number }[], offsetMs: number) {
  const inside = lags.filter((l) => stretches.some((s) => l.dueAt >= s.from + offsetMs && l.dueAt <= s.to + offsetMs));
  return inside.map((l) => l.lag);
}
