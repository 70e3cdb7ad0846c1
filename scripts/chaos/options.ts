// Command-line options of `npm run chaos` and the run's fixed timing. The short variant is what
// CI runs: fewer workers and schedules, about two and a half minutes end to end.

/** Everything a chaos run is parameterised by. */
export type ChaosOptions = {
  short: boolean;
  /** Worker processes at any time (one of them skewed, one of them the fast-restart "churn" worker). */
  workers: number;
  /** sql-ledger schedules created at the start (plus one `fail` schedule for re-queues). */
  schedules: number;
  /** Length of the fault phase. */
  minutes: number;
  seed: number;
  /** Lease of every chaos schedule; recovery is measured against lease + poll. */
  leaseSeconds: number;
  pollIntervalMs: number;
  /** The skewed worker's wall clock offset. */
  skewMs: number;
  /** How long PostgreSQL stays down in the restart fault (kept well under any lateness limit). */
  dbDownMs: number;
  /** How often the churn worker is restarted (faster than the slowest schedule's interval). */
  churnEveryMs: number;
  /** Extra processes that only tick, on every partition, concurrently with the workers. */
  tickers: number;
  /** Probability that the proxy cuts a connection at a commit point. */
  cutRate: number;
  maxCuts: number;
  /** The console's own proxy: its cut probability and budget. */
  consoleCutRate: number;
  consoleMaxCuts: number;
  /** When each failover to a standby comes, as fractions of the fault phase (after the crash). */
  failoverAt: number[];
  /** When the console is killed (kill -9, restarted), as fractions of the fault phase. */
  consoleKillsAt: number[];
  /** Where worker, console and ticker logs go. */
  logDir: string;
};

function numberFlag(argv: string[], name: string): number | undefined {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = Number(argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} needs a positive number, got ${argv[i + 1]}`);
  return v;
}

/** Parse `--workers K --schedules M --minutes T --short --seed N`. */
export function parseOptions(argv: string[]): ChaosOptions {
  const short = argv.includes("--short");
  const known = new Set(["--short", "--workers", "--schedules", "--minutes", "--seed", "--seeds"]);
  for (const a of argv) if (a.startsWith("--") && !known.has(a)) throw new Error(`unknown option ${a}`);
  const workers = numberFlag(argv, "workers") ?? (short ? 4 : 6);
  if (workers < 3) throw new Error("--workers must be at least 3 (one skewed, one churning, one steady)");
  return {
    short,
    workers: Math.round(workers),
    schedules: Math.round(numberFlag(argv, "schedules") ?? (short ? 6 : 12)),
    minutes: numberFlag(argv, "minutes") ?? (short ? 1.5 : 30),
    seed: Math.round(numberFlag(argv, "seed") ?? Math.floor(Math.random() * 1e9)),
    leaseSeconds: 4,
    pollIntervalMs: 250,
    skewMs: 7 * 60_000,
    dbDownMs: 5000,
    churnEveryMs: 10_000,
    tickers: 2,
    cutRate: short ? 0.01 : 0.004,
    maxCuts: short ? 40 : 400,
    consoleCutRate: 0.03,
    consoleMaxCuts: short ? 10 : 100,
    // The short run keeps one: a new standby and its failover take about 20 s on a busy machine.
    failoverAt: short ? [0.7] : [0.55, 0.75, 0.9],
    consoleKillsAt: short ? [0.3] : [0.12, 0.3, 0.5, 0.62, 0.85],
    logDir: "",
  };
}
