// An extra scheduler instance for the chaos run: ticks every partition in a tight loop while the
// workers tick their own, so several tickers race on the same schedules (the unique slot key and
// FOR UPDATE SKIP LOCKED must keep each slot single). Runs through the cutting proxy; exits by
// itself at CHAOS_TICKER_UNTIL. Started by scripts/chaos.ts, never by hand.
import { createDb, createPool } from "../../lib/db/client";
import { tickOnce } from "../../lib/runs/tick";

const until = Number(process.env.CHAOS_TICKER_UNTIL);
const horizonSeconds = Number(process.env.SLOTKEEPER_TICK_HORIZON_SECONDS ?? 10);
const graceSeconds = Number(process.env.SLOTKEEPER_CATCH_UP_GRACE_SECONDS ?? 30);
const pool = createPool(process.env.DATABASE_URL!, { max: 2, applicationName: "slotkeeper:chaos-ticker" });
const db = createDb(pool);

async function main() {
  let ticks = 0;
  let errors = 0;
  for (let i = 0; i < 100_000 && Date.now() < until; i++) {
  try {
    const r = await tickOnce(db, { partitions: null, horizonSeconds, graceSeconds });
    ticks++;
    if (r.created || r.skipped) console.log(JSON.stringify({ event: "chaos:tick:created", ...r }));
  } catch (err) {
    errors++;
    console.log(JSON.stringify({ event: "chaos:tick:error", message: err instanceof Error ? err.message : String(err) }));
  }
  await new Promise((r) => setTimeout(r, 150 + Math.random() * 250));
}
  console.log(JSON.stringify({ event: "chaos:tick:stop", ticks, errors }));
  await pool.end().catch(() => {});
  process.exit(0);
}

void main();
