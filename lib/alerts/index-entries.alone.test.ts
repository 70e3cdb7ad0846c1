// An alert pass leaves the next one none of the index entries of the instants it replaced: its last
// probe of alert_watch_check_idx marks them dead. Alone (vitest.config.mts): a probe can mark an
// entry only when no snapshot older than the pass's commits is open anywhere on the server, and a
// snapshot's horizon counts every transaction running cluster-wide, so a parallel suite's writer
// in another database (a 20,000-schedule seed, say) keeps them unmarked for as long as it runs.
// The oracle is PostgreSQL's own count of the index entries each scan returned.
import { expect, it } from "vitest";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { ALERT_PASS_OPTIONS, healthyInBulk, measuredPass } from "../testing/alert-passes";
import { evaluateAlerts } from "./evaluate";

const t = setupTestDatabase({ poolSize: 3 });

it("a pass leaves the next none of the index entries of the instants it replaced", async () => {
  await setClock(t.pool, new Date("2030-01-01T10:00:00Z"));
  await healthyInBulk(t.pool, "settle-", 2000);
  await evaluateAlerts(t.db, ALERT_PASS_OPTIONS);
  // Each instant made due (and the old entries vacuumed away), then replaced by a pass: their
  // entries lie before the first live one. Up to five tries, as the test had in the parallel suite:
  // any transaction open on the server while the pass commits holds the horizon back until it ends.
  // Without the probe the idle pass reads all 2,000 each time.
  const reads: number[] = [];
  while (reads.length < 5 && (reads.length === 0 || reads.at(-1)! > 1)) {
    await t.pool.query("UPDATE alert_watch SET check_at = '-infinity'");
    await t.pool.query("VACUUM alert_watch");
    expect((await evaluateAlerts(t.db, ALERT_PASS_OPTIONS)).checked).toBe(2000);
    const idle = await measuredPass(t.url, t.pool);
    expect(idle.checked).toBe(0);
    reads.push(idle.reads.alert_watch_check_idx);
  }
  expect(reads.at(-1), `index entries the idle passes read: ${reads.join(", ")}`).toBeLessThanOrEqual(1);
});
