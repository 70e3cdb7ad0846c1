import path from "node:path";
import { describe, expect, it } from "vitest";
import { evaluateAlerts } from "../alerts/evaluate";
import { setupTestDatabase } from "../testing/db";
import { promtoolCheckMetrics, promtoolCheckRules } from "../testing/promtool";
import { collectMetrics } from "./collect";
import { parsePrometheusText } from "./parse-text";
import { renderMetrics } from "./render";

// The scrape's size must not follow the fleet: 10 or 5,000 schedules, the same series.
const t = setupTestDatabase({ reset: false });

/** Add schedules until there are `total`, spread over three handlers, every 60 s; then an alert pass judges them. */
async function fleetOf(total: number): Promise<void> {
  await t.pool.query(
    `INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition)
     SELECT 'fleet-' || i, (ARRAY['noop', 'http', 'sleep'])[1 + i % 3], 60, sk_now(), i % 16
     FROM generate_series((SELECT count(*) FROM schedules) + 1, $1) AS i`,
    [total],
  );
  await evaluateAlerts(t.db, { publicUrl: "http://localhost", reminderSeconds: 0 });
}

async function scrapeText(opts: Parameters<typeof collectMetrics>[1] = {}): Promise<string> {
  return (await renderMetrics(await collectMetrics(t.db, opts))).text;
}

const seriesOf = (text: string) => [...parsePrometheusText(text).values()].flatMap((f) => f.samples.map((s) => `${s.name}${JSON.stringify(s.labels)}`)).sort();

describe("metrics cardinality", () => {
  it("gives the same series with 10 schedules as with 5,000 by default, and promtool accepts both", async () => {
    await fleetOf(10);
    const small = await scrapeText();
    await fleetOf(5000);
    expect((await t.pool.query("SELECT count(*)::int AS n FROM schedules")).rows[0].n).toBe(5000);
    const large = await scrapeText();
    expect(seriesOf(large)).toEqual(seriesOf(small));
    expect(large.length).toBeLessThan(small.length + 200); // only the counts' digits differ
    expect(promtoolCheckMetrics(large)).toEqual({ status: 0, output: "" });
  });

  it("bounds worst:N to N schedules however large the fleet", async () => {
    const text = await scrapeText({ perSchedule: { kind: "worst", count: 25 } });
    const named = new Set([...parsePrometheusText(text).values()].flatMap((f) => f.samples.map((s) => s.labels.schedule).filter(Boolean)));
    expect(named.size).toBe(25);
    expect(promtoolCheckMetrics(text)).toEqual({ status: 0, output: "" });
  });

  it("ships a Prometheus rules example that promtool accepts", () => {
    const file = path.resolve(import.meta.dirname, "../alerts/prometheus-rules.example.yml");
    const r = promtoolCheckRules(file);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toMatch(/SUCCESS: \d+ rules found/);
  });
});
