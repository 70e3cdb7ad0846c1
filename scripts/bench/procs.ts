// Child processes for the benchmark: spawn, sample their memory, stop them.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";

export type Proc = { child: ChildProcess; pid: number; peakRssMb: number; exited: Promise<number | null> };

/** Start `node --import tsx <entry>` with extra environment; its output goes to our stderr (warnings only). */
export function startNode(entry: string, env: Record<string, string>, args: string[] = [], flags: string[] = []): Proc {
  // BENCH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the workers.
  const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(" ") : [];
  const child = spawn(process.execPath, [...flags, ...nodeArgs, "--import", "tsx", entry, ...args], {
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
