// Test-only: real worker processes (`node --import tsx worker/main.ts`) against a test database,
// with their JSON log lines collected so tests can wait for and assert on events.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

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

const live = new Set<WorkerProcess>();

/** Start a worker process named `id` on `databaseUrl`; env overrides the test defaults (fast poll, short grace). */
export function spawnWorker(databaseUrl: string, id: string, env: Record<string, string> = {}): WorkerProcess {
  const proc = spawn(process.execPath, ["--import", "tsx", "worker/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      SLOTKEEPER_WORKER_ID: id,
      SLOTKEEPER_POLL_INTERVAL_MS: "200",
      SLOTKEEPER_LEASE_SAFETY_MARGIN_MS: "500",
      SLOTKEEPER_SHUTDOWN_GRACE_MS: "2000",
      LOG_LEVEL: "info",
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

/** SIGKILL every worker process still alive (SIGCONT first, so stopped ones die too); call in afterEach. */
export async function killAllWorkers(): Promise<void> {
  const all = [...live];
  for (const w of all) {
    w.signal("SIGCONT");
    w.signal("SIGKILL");
  }
  await Promise.all(all.map((w) => w.exited));
}

/** Start workers and wait until each has logged worker:start. */
export async function startWorkers(databaseUrl: string, ids: string[], env: Record<string, string> = {}): Promise<WorkerProcess[]> {
  const ws = ids.map((id) => spawnWorker(databaseUrl, id, env));
  await Promise.all(ws.map((w) => w.waitFor((l) => l.event === "worker:start", 60_000)));
  return ws;
}
