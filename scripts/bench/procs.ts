// Child processes for the benchmark: spawn, sample their memory, stop them.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";

export type Proc = { child: ChildProcess; pid: number; peakRssMb: number; exited: Promise<number | null> };

/**
 * Start a node process with extra environment; its output goes to our stderr (warnings only).
 * `node`: node's arguments, ending with the entry point (a worker's: workerNodeArgs in
 * worker/node-flags.ts).
 */
export function startNode(node: string[], env: Record<string, string>, args: string[] = [], netns?: string): Proc {
  // BENCH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the workers.
  const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(" ") : [];
  const argv = [...node.slice(0, -1), ...nodeArgs, ...node.slice(-1), ...args];
  // `netns`: in that network namespace (a host of lib/testing/hosts.ts); `ip netns exec` execs
  // node, so the pid, its RSS and CPU and the signals are the worker's own.
  const child = spawn(netns ? "ip" : process.execPath, netns ? ["netns", "exec", netns, process.execPath, ...argv] : argv, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, pid: child.pid!, peakRssMb: 0, exited };
}

/** Resident set size in MB: now (VmRSS) or the process's lifetime high-water mark (VmHWM). */
export function readRssMb(pid: number, which: "VmRSS" | "VmHWM" = "VmRSS"): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const m = new RegExp(`${which}:\\s+(\\d+) kB`).exec(status);
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Sample every process's RSS (VmRSS) every `everyMs`, keeping the peak, until the returned stop function is called. */
export function sampleRss(procs: Proc[], everyMs = 100): () => void {
  const tick = () => {
    for (const p of procs) p.peakRssMb = Math.max(p.peakRssMb, readRssMb(p.pid));
  };
  const timer = setInterval(tick, everyMs);
  return () => {
    tick();
    clearInterval(timer);
  };
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces); null once it is gone. */
function statFields(pid: number): string[] | null {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(")").pop()!.trim().split(" ");
  } catch {
    return null;
  }
}

/** User plus system CPU seconds a process has used so far (0 once it is gone): utime and stime. */
function cpuSecondsOf(pid: number): number {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / CLOCK_TICKS : 0;
}

/** CPU seconds of a process's children that have ended and been waited for (cutime and cstime). */
function endedChildrenCpuSecondsOf(pid: number): number {
  const f = statFields(pid);
  return f ? (Number(f[13]) + Number(f[14])) / CLOCK_TICKS : 0;
}

/** The PostgreSQL servers' postmasters here: postgres processes whose parent is not one. */
function postmasterPids(pgPids: number[]): number[] {
  const pg = new Set(pgPids);
  return pgPids.filter((pid) => !pg.has(Number(statFields(pid)?.[1] ?? -1)));
}

// Linux's USER_HZ, what /proc/<pid>/stat counts in: 100 on every architecture Node runs on.
const CLOCK_TICKS = 100;

/** Every PostgreSQL process on this machine (backends, WAL writer, checkpointer…); empty when the server is elsewhere. */
function postgresPids(): number[] {
  let names: string[];
  try {
    names = fs.readdirSync("/proc");
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (fs.readFileSync(`/proc/${n}/comm`, "utf8").trim() === "postgres") out.push(Number(n));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU is counted from this long before a spike's due instant, so the idle wait before it (polls of an empty queue) stays out. */
export const CPU_LEAD_MS = 50;

/** CPU used in a phase, per run: by PostgreSQL on this machine and by the phase's worker processes. */
export type CpuPerRun = { databaseMicros: number | null; workersMicros: number };

/**
 * Start counting CPU for a phase; the returned function, called at its end, gives microseconds
 * per run. The database's part is null when no PostgreSQL process runs here (a remote server).
 * PostgreSQL's part is every process of its servers here: what each one alive at the end used since
 * the start (all of it for one that began within the phase: a pool's new connection), and what the
 * ones that ended within the phase used, from the postmaster's count of its ended children less
 * what those that were there at the start had used by then. A worker process that exits during
 * the phase loses its part (the phase's workers live through it).
 */
export function countCpu(workers: Proc[]): (runs: number) => CpuPerRun {
  const pg = postgresPids();
  const postmasters = postmasterPids(pg);
  const endedAtStart = postmasters.reduce((sum, pid) => sum + endedChildrenCpuSecondsOf(pid), 0);
  const before = new Map([...pg, ...workers.map((w) => w.pid)].map((pid) => [pid, cpuSecondsOf(pid)]));
  return (runs) => {
    const used = (pids: Iterable<number>) => [...pids].reduce((sum, pid) => sum + Math.max(0, cpuSecondsOf(pid) - (before.get(pid) ?? 0)), 0);
    const alive = new Set(postgresPids());
    const endedWholeLives = postmasters.reduce((sum, pid) => sum + endedChildrenCpuSecondsOf(pid), 0) - endedAtStart;
    const endedBeforePhase = pg.filter((pid) => !alive.has(pid)).reduce((sum, pid) => sum + (before.get(pid) ?? 0), 0);
    const database = used(alive) + Math.max(0, endedWholeLives - endedBeforePhase);
    const micros = (seconds: number) => Math.round((seconds * 1e7) / Math.max(1, runs)) / 10;
    return { databaseMicros: pg.length > 0 ? micros(database) : null, workersMicros: micros(used(workers.map((w) => w.pid))) };
  };
}

/** SIGTERM each process and wait for it (SIGKILL after `graceMs`). */
export async function stopAll(procs: Proc[], graceMs = 15_000): Promise<void> {
  for (const p of procs) p.child.kill("SIGTERM");
  await Promise.all(
    procs.map(async (p) => {
      const timer = setTimeout(() => p.child.kill("SIGKILL"), graceMs);
      await p.exited;
      clearTimeout(timer);
    }),
  );
}

/**
 * How often the harness asks whether a drain is over. Every number comes from the runs' own
 * timestamps, so this only decides when we look, but each look costs the database: at 50-100 ms
 * the check (which walks index entries the claims just left dead) took ~1 s of database time in a
 * 9 s spike, CPU the workers competed for (measured with log_min_duration_statement = 0).
 */
export const DRAIN_POLL_MS = 500;

/** Resolve when `check` returns true, polling every `everyMs`; reject after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`bench: timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Where the machine's CPU went over a phase, in core-seconds, and how busy its cores were. */
export type CpuSplit = {
  seconds: number;
  cores: number;
  /** Share of all cores' time not idle (user, system, irq, steal…) over the phase (/proc/stat). */
  machineBusyShare: number;
  coreSeconds: {
    /**
     * PostgreSQL backends by who connected (application_name): the workers', the console readers',
     * the rest (the harness's own, the server's background processes), each with the part of its
     * connections that closed within the phase they used in it up to their last sample; `ended`:
     * what processes that ended within the phase used after their last sample or were never
     * sampled in (parallel query workers), from the postmaster's count of its ended children.
     */
    database: { workers: number; readers: number; other: number; ended: number };
    workers: number;
    /** This process: the harness and, in the fleet bench, the console readers' client side. */
    harness: number;
    /** Everything else on the machine. */
    other: number;
  };
};

/** Busy and total jiffies of all cores together, from /proc/stat's first line. */
function machineJiffies(): { busy: number; total: number } {
  const f = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is inside user).
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total };
}

/** How often splitCpu reads each process's CPU, so a connection that closes within a phase is counted up to here. */
export const CPU_SAMPLE_MS = 250;

/** Which part of the database's CPU a backend's application_name puts it in. */
function databaseShare(name: string): "workers" | "readers" | "other" {
  return name.startsWith("slotkeeper:worker") ? "workers" : name === "slotkeeper:bench-console" ? "readers" : "other";
}

/**
 * Start splitting CPU for a phase: `backends()` names each PostgreSQL backend's application_name
 * (pg_stat_activity), read at the start, whenever a process appears, and at the end.
 *
 * Per-process counters read every CPU_SAMPLE_MS. A process's CPU in the phase is what it used since
 * its first reading (0 when it began within the phase). A backend that ends within the phase (a
 * pool's connection closed when idle) takes its counter with it: it counts with its
 * application_name up to its last reading, and the postmaster's count of its ended children, less
 * those processes' whole lives up to their last readings, is `database.ended` (what they used after
 * it, and processes that lived between two readings). Any other process that ends is `other`.
 */
export async function splitCpu(workers: Proc[], backends: () => Promise<Map<number, string>>, opts: { onSample?: () => void } = {}): Promise<() => Promise<CpuSplit>> {
  const started = performance.now();
  const jiffies = machineJiffies();
  const harness = process.cpuUsage();
  const names = await backends();
  const pids = () => new Set([...postgresPids(), ...workers.map((w) => w.pid)]);
  const before = new Map([...pids()].map((pid) => [pid, cpuSecondsOf(pid)]));
  // Whole-life CPU of every process at its latest reading (0 once gone, so never overwritten by it).
  const latest = new Map(before);
  const postmasters = postmasterPids(postgresPids());
  const endedBefore = postmasters.reduce((sum, pid) => sum + endedChildrenCpuSecondsOf(pid), 0);
  // Processes asked about once: another server's (never in backends()) is not asked about again.
  const asked = new Set(before.keys());
  let naming: Promise<void> | null = null;
  const sample = () => {
    const unasked: number[] = [];
    for (const pid of pids()) {
      const s = cpuSecondsOf(pid);
      if (s > 0 || !latest.has(pid)) latest.set(pid, s);
      if (!asked.has(pid)) unasked.push(pid);
    }
    if (unasked.length > 0 && naming === null) {
      naming = backends()
        .then((found) => {
          for (const [pid, name] of found) names.set(pid, name);
          for (const pid of unasked) asked.add(pid);
        })
        .catch(() => undefined)
        .finally(() => (naming = null));
    }
    opts.onSample?.();
  };
  const sampler = setInterval(sample, CPU_SAMPLE_MS);
  return async () => {
    clearInterval(sampler);
    await naming;
    const seconds = (performance.now() - started) / 1000;
    for (const [pid, name] of await backends()) names.set(pid, name);
    const alive = pids();
    const used = new Map([...alive].map((pid) => [pid, Math.max(0, cpuSecondsOf(pid) - (before.get(pid) ?? 0))]));
    const jiffiesNow = machineJiffies();
    const h = process.cpuUsage(harness);
    const r2 = (x: number) => Math.round(x * 100) / 100;
    const endedWholeLives = postmasters.reduce((sum, pid) => sum + endedChildrenCpuSecondsOf(pid), 0) - endedBefore;
    const database = { workers: 0, readers: 0, other: 0, ended: 0 };
    let endedSampled = 0;
    for (const [pid, last] of latest) {
      if (alive.has(pid) || !names.has(pid)) continue;
      // A backend that closed within the phase: counted with its application up to its last reading.
      database[databaseShare(names.get(pid)!)] += Math.max(0, last - (before.get(pid) ?? 0));
      endedSampled += last;
    }
    database.ended = Math.max(0, endedWholeLives - endedSampled);
    const workerPids = new Set(workers.map((w) => w.pid));
    let workerSeconds = 0;
    for (const [pid, s] of used) {
      if (workerPids.has(pid)) workerSeconds += s;
      else database[databaseShare(names.get(pid) ?? "")] += s;
    }
    const busyCoreSeconds = (jiffiesNow.busy - jiffies.busy) / CLOCK_TICKS;
    const harnessSeconds = (h.user + h.system) / 1e6;
    const counted = database.workers + database.readers + database.other + database.ended + workerSeconds + harnessSeconds;
    return {
      seconds: r2(seconds),
      cores: os.cpus().length,
      machineBusyShare: r2((jiffiesNow.busy - jiffies.busy) / Math.max(1, jiffiesNow.total - jiffies.total)),
      coreSeconds: {
        database: { workers: r2(database.workers), readers: r2(database.readers), other: r2(database.other), ended: r2(database.ended) },
        workers: r2(workerSeconds),
        harness: r2(harnessSeconds),
        other: r2(Math.max(0, busyCoreSeconds - counted)),
      },
    };
  };
}
