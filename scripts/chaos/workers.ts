// The chaos run's worker processes: spawn, kill -9, SIGSTOP/SIGCONT, SIGTERM, replace. Every child
// is tracked so that `killAll()` (also called from process.on('exit')) leaves nothing behind.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { workerNodeArgs } from "../../worker/node-flags";

/** One worker process: its Slotkeeper worker id, pid, role and how it ended. */
export type WorkerProc = {
  id: string;
  role: "normal" | "skewed" | "churn";
  child: ChildProcess;
  startedAt: number;
  exited: boolean;
  stopped: boolean;
  /**
   * A fault has taken it (kill -9, SIGSTOP, silent connections): no other fault picks it until
   * that one is over. Set in the same tick as the pick, since fault loops run side by side and a
   * worker killed by one loop while another silences it would be judged for a silence it never had.
   */
  taken?: boolean;
  logFile: string;
};

/** Running, not frozen, and taken by no fault: a fault may pick it. */
export const isFree = (w: WorkerProc) => !w.exited && !w.stopped && !w.taken;

export type WorkerPoolOptions = {
  databaseUrl: string;
  logDir: string;
  pollIntervalMs: number;
  /** Extra environment for every worker (tick horizon, lease margin, …). */
  env: Record<string, string>;
  /** Wall-clock offset for the skewed worker. */
  skewMs: number;
  /** Hard cap on processes started in one run, so no loop can spawn without end. */
  maxSpawns: number;
};

/** The URL with application_name set. */
function withApplicationName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set("application_name", name);
  return u.toString();
}

/** Create a pool that spawns workers as `npm run worker` starts one (worker/node-flags.ts). */
export function createWorkerPool(opts: WorkerPoolOptions) {
  const all: WorkerProc[] = [];
  let spawned = 0;

  const start = (role: WorkerProc["role"]): WorkerProc | null => {
    if (spawned >= opts.maxSpawns) return null;
    spawned++;
    const id = `chaos-${role}-${spawned}`;
    const logFile = path.join(opts.logDir, `${id}.log`);
    const out = fs.openSync(logFile, "a");
    // The skew preload is required after tsx's hook, so Node can load a .ts file.
    const args = workerNodeArgs("worker/main.ts", role === "skewed" ? ["./scripts/chaos/skew-clock.ts"] : []);
    const child = spawn(process.execPath, args, {
      env: {
        ...process.env,
        ...opts.env,
        // Every connection of this worker names it (the URL's application_name wins over the
        // pools' own), so the proxy knows whose connections to silence.
        DATABASE_URL: withApplicationName(opts.databaseUrl, id),
        SLOTKEEPER_WORKER_ID: id,
        SLOTKEEPER_POLL_INTERVAL_MS: String(opts.pollIntervalMs),
        SLOTKEEPER_CLOCK_SKEW_MS: role === "skewed" ? String(opts.skewMs) : "0",
        LOG_LEVEL: process.env.CHAOS_WORKER_LOG_LEVEL ?? "info",
      },
      stdio: ["ignore", out, out],
    });
    fs.closeSync(out);
    const w: WorkerProc = { id, role, child, startedAt: Date.now(), exited: false, stopped: false, logFile };
    child.on("exit", () => {
      w.exited = true;
    });
    all.push(w);
    return w;
  };

  const signal = (w: WorkerProc, sig: NodeJS.Signals) => {
    if (w.exited || w.child.pid === undefined) return;
    try {
      process.kill(w.child.pid, sig);
    } catch {
      // already gone
    }
  };

  const waitExit = (w: WorkerProc, timeoutMs: number) =>
    new Promise<boolean>((resolve) => {
      if (w.exited) return resolve(true);
      const t = setTimeout(() => resolve(false), timeoutMs);
      w.child.once("exit", () => {
        clearTimeout(t);
        resolve(true);
      });
    });

  return {
    all,
    start,
    /** Live (not exited) workers, optionally of one role. */
    live: (role?: WorkerProc["role"]) => all.filter((w) => !w.exited && (!role || w.role === role)),
    /** Live workers of a role (or every role but churn) that no fault has taken now. */
    free: (role?: WorkerProc["role"]) => all.filter((w) => isFree(w) && (role ? w.role === role : w.role !== "churn")),
    /** kill -9: no shutdown, no release; its leases must expire. */
    kill9: async (w: WorkerProc) => {
      signal(w, "SIGKILL");
      await waitExit(w, 5000);
    },
    /** SIGSTOP: the process freezes, its heartbeats stop, its leases expire while it still "runs". */
    pause: (w: WorkerProc) => {
      signal(w, "SIGSTOP");
      w.stopped = true;
    },
    /** SIGCONT: the frozen worker wakes and carries on with runs it no longer holds. */
    resume: (w: WorkerProc) => {
      signal(w, "SIGCONT");
      w.stopped = false;
    },
    /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
    terminate: async (w: WorkerProc, graceMs: number) => {
      signal(w, "SIGTERM");
      if (!(await waitExit(w, graceMs))) {
        signal(w, "SIGKILL");
        await waitExit(w, 5000);
      }
    },
    spawned: () => spawned,
    /** Synchronous last resort for process.on('exit'): wake and kill every child. */
    killAll: () => {
      for (const w of all) {
        signal(w, "SIGCONT");
        signal(w, "SIGKILL");
      }
    },
  };
}

export type WorkerPool = ReturnType<typeof createWorkerPool>;
