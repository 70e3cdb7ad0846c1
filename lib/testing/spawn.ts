// Test-only: real worker processes, started as `npm run worker` starts one (worker/node-flags.ts),
// against a test database, with their JSON log lines collected so tests can wait for and assert on
// events.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { workerNodeArgs } from "../../worker/node-flags";

const ROOT = path.resolve(import.meta.dirname, "../..");

export type LogLine = { event?: string; [k: string]: unknown };

export type WorkerProcess = {
  id: string;
  proc: ChildProcess;
  lines: LogLine[];
  /** Resolve with the first log line (already seen or future) matching `pred`, or reject after `timeoutMs`. */
  waitFor: (pred: (l: LogLine) => boolean, timeoutMs?: number) => Promise<LogLine>;
  /** Resolve when the process has exited. */
  exited: Promise<number | null>;
  signal: (sig: NodeJS.Signals) => void;
  /** What the process wrote to stderr so far. */
  stderr: () => string;
};

/** `script` relative to `cwd` (default: the repository); `plain`: no tsx loader, as a project using the package runs it. */
export type SpawnOptions = { script?: string; cwd?: string; plain?: boolean; netns?: string };

const live = new Set<WorkerProcess>();

/** Start a worker process named `id` on `databaseUrl`; env overrides the test defaults (fast poll, short grace). */
export function spawnWorker(databaseUrl: string, id: string, env: Record<string, string> = {}, opts: SpawnOptions = {}): WorkerProcess {
  // `script`: another entry point, e.g. lib/testing/handler-worker.ts (a worker with custom handlers).
  // `plain`: run it as another project would, with plain Node.js (no tsx loader) from `cwd`.
  // `netns`: run it in that network namespace, a host of lib/testing/hosts.ts (`ip netns exec`
  // execs the command, so the child's pid is the worker's own and signals reach it).
  const nodeArgs = opts.plain ? [opts.script ?? "worker.mjs"] : workerNodeArgs(opts.script);
  const [cmd, args] = opts.netns ? ["ip", ["netns", "exec", opts.netns, process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  const proc = spawn(cmd, args, {
    cwd: opts.cwd ?? ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      SLOTKEEPER_WORKER_ID: id,
      SLOTKEEPER_POLL_INTERVAL_MS: "200",
      SLOTKEEPER_LEASE_SAFETY_MARGIN_MS: "500",
      SLOTKEEPER_SHUTDOWN_GRACE_MS: "2000",
      LOG_LEVEL: "info",
      // Handlers in these tests call receivers on this machine, which the outbound policy refuses by default.
      SLOTKEEPER_OUTBOUND_ALLOW: "127.0.0.1,::1,localhost",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: LogLine[] = [];
  const waiters: { pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  let buf = "";
  proc.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const text = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { event: "stdout", text };
      }
      lines.push(line);
      for (const w of [...waiters]) if (w.pred(line)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(line));
    }
  });
  let stderr = "";
  proc.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  const w: WorkerProcess = {
    id,
    proc,
    lines,
    exited,
    stderr: () => stderr,
    signal: (sig) => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(sig);
    },
    waitFor: (pred, timeoutMs = 30_000) => {
      const seen = lines.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`worker ${id}: no matching log line within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`)), timeoutMs);
        waiters.push({ pred, resolve: (l) => (clearTimeout(timer), resolve(l)) });
      });
    },
  };
  live.add(w);
  void exited.then(() => live.delete(w));
  return w;
}

/** Worker processes started by this test file that are still alive. */
export function liveWorkers(): WorkerProcess[] {
  return [...live];
}

/**
 * SIGKILL these worker processes (SIGCONT first, so stopped ones die too) and wait for them to
 * exit. setupTestDatabase (lib/testing/db.ts) calls it after each test and at the end of the file.
 */
export async function killWorkers(ws: WorkerProcess[]): Promise<void> {
  for (const w of ws) {
    w.signal("SIGCONT");
    w.signal("SIGKILL");
  }
  await Promise.all(ws.map((w) => w.exited));
}

/** Start workers and wait until each has logged worker:start. */
export async function startWorkers(databaseUrl: string, ids: string[], env: Record<string, string> = {}, opts: SpawnOptions = {}): Promise<WorkerProcess[]> {
  const ws = ids.map((id) => spawnWorker(databaseUrl, id, env, opts));
  await Promise.all(ws.map((w) => w.waitFor((l) => l.event === "worker:start", 60_000)));
  return ws;
}
