// What the console and Prometheus read at fleet scale: the console's four heaviest pages with
// concurrent readers, one metrics scrape, and the alert pass in a process of its own.
import { spawn } from "node:child_process";
import path from "node:path";
import { createDb, createPool, WEB_POOL_OPTIONS, type Db } from "../../lib/db/client";
import { loadConfig } from "../../lib/config";
import { sharedOverview } from "../../lib/health/overview-shared";
import { collectMetrics } from "../../lib/metrics/collect";
import { renderMetrics } from "../../lib/metrics/render";
import { listRuns } from "../../lib/runs/history";
import { searchSchedules } from "../../lib/schedules/list";
import { toScheduleViewsWithHealth } from "../../lib/schedules/queries";

/** What the readers look for: a name to search and a schedule whose history they page. */
export type ConsoleTarget = { search: string; historyScheduleId: number };

/**
 * The console's reads, each what its API route calls (app/api/overview, GET /api/schedules?search=,
 * GET /api/schedules/{name}/runs, GET /api/runs). Point an entry at a new parameter here and the
 * report follows.
 */
export const CONSOLE_READS: Record<string, (db: Db, t: ConsoleTarget) => Promise<unknown>> = {
  overview: (db) => sharedOverview(db, loadConfig().overviewMaxAgeMs),
  search: async (db, t) => toScheduleViewsWithHealth(db, (await searchSchedules(db, { search: t.search, limit: 50 })).schedules),
  history: (db, t) => listRuns(db, { scheduleIds: [t.historyScheduleId] }),
  // The Runs page's first request: no upcoming slots (components/runs-view.tsx).
  runs: (db) => listRuns(db, { upcoming: false }),
};

export type ConsoleReport = Record<string, { p50Ms: number; p95Ms: number; calls: number }> & { readers: number; paceMs: number };

/**
 * Start `readers` concurrent readers, each cycling through CONSOLE_READS (offset by its index) on a
 * pool of its own, until the returned stop() is called; stop() resolves to p50/p95 of each read
 * (every call begun before stop() counted).
 *
 * `paceMs`: a reader begins a read at most once per `paceMs`, as an open console refetches its
 * page every LIVE_REFRESH_MS (lib/client/api.ts; a read that takes longer is followed by the next
 * at once), the readers' first reads spread over one pace. 0: each reader reads again the moment
 * its read returns, a load test rather than readers.
 *
 * `recordFrom` (a performance.now() instant): reads begun before it are not counted. Readers
 * started ahead of a phase read as consoles already open when it begins do, with the Overview
 * already shared among them (lib/health/overview-shared.ts) and their pages read once.
 */
export function startConsoleReaders(
  url: string,
  target: ConsoleTarget,
  readers = 20,
  paceMs = 0,
  recordFrom = 0,
): { stop: () => Promise<ConsoleReport>; fewestCalls: () => number } {
  const pool = createPool(url, { ...WEB_POOL_OPTIONS, max: readers, applicationName: "slotkeeper:bench-console" });
  const db = createDb(pool);
  const names = Object.keys(CONSOLE_READS);
  const ms = new Map<string, number[]>(names.map((n) => [n, []]));
  let stopping = false;
  const pause = (delayMs: number) => (delayMs > 0 && !stopping ? new Promise((r) => setTimeout(r, delayMs)) : Promise.resolve());
  const loops = Array.from({ length: readers }, async (_, i) => {
    await pause((i * paceMs) / readers);
    for (let k = i; !stopping; k++) {
      const name = names[k % names.length];
      const t0 = performance.now();
      await CONSOLE_READS[name](db, target);
      // A read begun before stop() counts: it met the spike.
      if (t0 >= recordFrom) ms.get(name)!.push(performance.now() - t0);
      await pause(t0 + paceMs - performance.now());
    }
  });
  return {
    /** Calls finished of the read with the fewest. */
    fewestCalls: () => Math.min(...[...ms.values()].map((xs) => xs.length)),
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
      await pool.end();
      const q = (xs: number[], p: number) => (xs.length === 0 ? 0 : Math.round([...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] * 10) / 10);
      const out: Record<string, unknown> = { readers, paceMs };
      for (const [n, xs] of ms) out[n] = { p50Ms: q(xs, 0.5), p95Ms: q(xs, 0.95), calls: xs.length };
      return out as ConsoleReport;
    },
  };
}

/** One scrape of GET /api/metrics: what its route does (collect, then render), timed, and the body's size. */
export async function scrapeMetrics(db: Db): Promise<{ bytes: number; seconds: number }> {
  const t0 = performance.now();
  const { text } = await renderMetrics(await collectMetrics(db, { perSchedule: loadConfig().metricsPerSchedule }));
  return { bytes: Buffer.byteLength(text), seconds: Math.round((performance.now() - t0) / 10) / 1000 };
}

/** What scripts/bench/alert-pass.ts prints: each pass's seconds and the schedules it read (`checked`), and the process's peak RSS. */
export type AlertPassRun = { seconds: number[]; checked: number[]; peakRssMb: number };

/**
 * Run evaluateAlerts `passes` times in a fresh Node process (as a worker would, with the
 * product's worker pool size), so its peak RSS is the pass's own.
 */
export function runAlertPasses(url: string, passes: number): Promise<AlertPassRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join("scripts", "bench", "alert-pass.ts")], {
      env: { ...process.env, BENCH_DATABASE_URL: url, BENCH_PASSES: String(passes) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`bench: alert pass exited with ${code}`));
      try {
        resolve(JSON.parse(out) as AlertPassRun);
      } catch (err) {
        reject(new Error(`bench: alert pass printed ${JSON.stringify(out.slice(0, 200))}`, { cause: err }));
      }
    });
  });
}
