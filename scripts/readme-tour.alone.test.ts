// Runs in the alone pass of npm test (vitest.config.mts): it runs the whole product (`npm start` and
// a second `npm run worker`) for about a minute and a half.
//
// README.md's five-minute tour, followed as a reader follows it. The shell commands are the ones in
// the tour's ```sh blocks, run by `sh` as written; the test changes only the console's port (the
// tour runs beside other tests) and what the tour tells the reader to put in (the pid to kill, the
// run ids), taken from the product's answers where the tour says to find them. The numbers, fields
// and log lines the tour promises are read from its prose too, so a README that drifts from the
// product fails here. Each promise is checked against what the product's answers say and, where
// one exists, against an oracle outside them: SQL on the database, the process table for pids.
//
// The reader uses the embedded PostgreSQL (DATABASE_URL unset), and so does this test, whatever the
// environment of the test run says; its data folder and ports are its own.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configDefaults } from "../lib/config";
import { portIsFree, startEmbeddedPostgres } from "../lib/db/embedded";
import { dbNow, runClockFrom } from "../lib/testing/clock";
import { waitUntil } from "../lib/testing/wait";
import { ensureBuild } from "./chaos/web";

const ROOT = path.resolve(import.meta.dirname, "..");
/**
 * A takeover's start is judged from the kill as the test reads it on the database clock, after
 * `kill` returned; the product and the test share two cores. The fault suite allows its observer
 * the same (scripts/chaos/checks.ts).
 */
const OBSERVER_TOLERANCE_MS = 500;
/** How far before its first slot the test stands the database clock when it creates the schedule. */
const FIRST_SLOT_LEAD_MS = 3_000;

// ---------------------------------------------------------------------------------------------
// The tour, read from README.md.

type TourStep = { n: number; prose: string; blocks: string[][] };

/** The commands of one ```sh block: continuation lines joined, blank lines dropped. */
function commandsOf(lines: string[]): string[] {
  const out: string[] = [];
  let pending = "";
  for (const line of lines) {
    if (line.trimEnd().endsWith("\\")) {
      pending += line.trimEnd().slice(0, -1).trim() + " ";
      continue;
    }
    const command = (pending + line.trim()).trim();
    pending = "";
    if (command) out.push(command);
  }
  return out;
}

/** The steps (`**N. …**` paragraphs) of README.md's "A five-minute tour": their prose, whitespace collapsed, and their ```sh blocks. */
function readTour(markdown: string): TourStep[] {
  const lines = markdown.split("\n");
  const start = lines.findIndex((l) => /^##\s+A five-minute tour\s*$/.test(l));
  if (start < 0) throw new Error('README.md has no "## A five-minute tour" section');
  const end = lines.findIndex((l, i) => i > start && /^##\s/.test(l));
  const steps: TourStep[] = [];
  let block: string[] | null = null;
  let fenceIsSh = false;
  for (const line of lines.slice(start + 1, end < 0 ? undefined : end)) {
    const fence = /^\s*```(\w*)\s*$/.exec(line);
    if (block) {
      if (fence) {
        if (fenceIsSh) steps[steps.length - 1]?.blocks.push(commandsOf(block));
        block = null;
      } else block.push(line);
      continue;
    }
    if (fence) {
      block = [];
      fenceIsSh = fence[1] === "sh";
      continue;
    }
    const head = /^\*\*(\d+)\.\s/.exec(line);
    if (head) steps.push({ n: Number(head[1]), prose: "", blocks: [] });
    const step = steps[steps.length - 1];
    if (step) step.prose += ` ${line}`;
  }
  for (const s of steps) s.prose = s.prose.replace(/\s+/g, " ").trim();
  return steps;
}

const tour = readTour(fs.readFileSync(path.join(ROOT, "README.md"), "utf8"));

function step(n: number): TourStep {
  const s = tour.find((x) => x.n === n);
  if (!s) throw new Error(`README.md's tour has no step ${n}`);
  return s;
}

/** What a step's prose says, by pattern; a README that no longer says it fails here, naming the step. */
function said(n: number, pattern: RegExp, what: string): RegExpExecArray {
  const m = pattern.exec(step(n).prose);
  if (!m) throw new Error(`README.md's tour, step ${n}, no longer says ${what} (${pattern}); update this test to the new text`);
  return m;
}

/** A step's ```sh blocks, each a list of commands; fails when the count differs from what the test follows. */
function blocks(n: number, count: number): string[][] {
  const b = step(n).blocks;
  if (b.length !== count) throw new Error(`README.md's tour, step ${n}, has ${b.length} sh blocks; this test follows ${count}`);
  return b;
}

/** `"key":value` pairs written in a code span, with their values parsed. */
function pairsIn(span: string): [string, unknown][] {
  return [...span.matchAll(/"(\w+)":("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g)].map((m) => [m[1], JSON.parse(m[2])]);
}

/** The code spans of a step's prose. */
const spansOf = (n: number) => [...step(n).prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

/** A line the tour quotes, as a pattern: `…` stands for whatever the product fills in. */
const quoted = (text: string) => new RegExp(text.split("…").map((p) => p.trim().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".+?"));

/** The command without a trailing shell comment (one with no quotes in it). */
const withoutComment = (command: string) => command.replace(/\s+#[^'"]*$/, "");

// ---------------------------------------------------------------------------------------------
// The reader's machine: terminals, the shell, the process table.

let port = 0;
let pgPort = 0;
let dataDir = "";
let db: pg.Pool | undefined;

/** The reader's environment: no DATABASE_URL (the embedded server) and no setting but the test's own folder and ports. */
function readerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), SLOTKEEPER_DATA_DIR: dataDir, SLOTKEEPER_PG_PORT: String(pgPort) };
  for (const k of Object.keys(env)) {
    if (/^(DATABASE_URL|DATABASE_READ_URL|LOG_LEVEL|NODE_ENV)$|^VITEST|^SLOTKEEPER_(?!DATA_DIR$|PG_PORT$)/.test(k)) Reflect.deleteProperty(env, k);
  }
  return env;
}

/** The tour's command as run here: the console is on this test's port. */
const here = (command: string) => command.replaceAll(`localhost:${configDefaults.port}`, `localhost:${port}`);

const execFileP = promisify(execFile);

/** Run a command with `sh`, as the reader's shell runs it, in the repository; its stdout. */
async function sh(command: string): Promise<string> {
  const { stdout } = await execFileP("sh", ["-c", here(command)], { cwd: ROOT, env: readerEnv(), maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** A tour command that answers JSON (curl to the API), and the answer. */
async function answer<T>(command: string): Promise<T> {
  const out = await sh(command);
  try {
    return JSON.parse(out) as T;
  } catch (err) {
    throw new Error(`${command} did not answer JSON: ${out.slice(0, 500)}`, { cause: err });
  }
}

/** Run a JSON command until its answer satisfies `ok`; the last answer. */
async function answerWhen<T>(command: string, ok: (a: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  let last: T | undefined;
  await waitUntil(
    async () => {
      last = await answer<T>(command);
      return ok(last);
    },
    timeoutMs,
    what,
    250,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; last answer: ${JSON.stringify(last)?.slice(0, 2000)}`);
  });
  return last!;
}

type Terminal = { child: ChildProcess; output: () => string; gone: () => boolean };
const terminals: Terminal[] = [];

/**
 * A terminal: a shell running the command as its foreground job in a process group of its own
 * (so Ctrl-C reaches the job and everything it started). The trailing `:` keeps `sh` from
 * exec-ing the command, so it reports how the job ended, as an interactive shell does.
 */
function openTerminal(command: string): Terminal {
  const child = spawn("sh", ["-c", `${here(command)}\n:`], { cwd: ROOT, env: readerEnv(), detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (c: string) => (output += c));
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (output += c));
  const gone = () => {
    try {
      process.kill(-child.pid!, 0);
      return false;
    } catch {
      return true;
    }
  };
  const t = { child, output: () => output, gone };
  terminals.push(t);
  return t;
}

/** Wait until the terminal prints a line matching `pattern`; fails early if its processes are all gone. */
async function printed(t: Terminal, pattern: RegExp, timeoutMs: number, what: string): Promise<void> {
  await waitUntil(
    () => {
      if (pattern.test(t.output())) return true;
      if (t.gone()) throw new Error(`the terminal's processes exited before ${what}:\n${t.output().slice(-4000)}`);
      return false;
    },
    timeoutMs,
    what,
    100,
  ).catch((e: Error) => {
    throw new Error(`${e.message}\n${t.output().slice(-4000)}`);
  });
}

/** Ctrl-C in a terminal, then wait until every process of it has exited. */
async function ctrlC(t: Terminal, timeoutMs: number): Promise<void> {
  if (t.gone()) return;
  process.kill(-t.child.pid!, "SIGINT");
  await waitUntil(t.gone, timeoutMs, "every process of the terminal to exit", 100);
}

/** The parent pid of a process, from the process table. */
function parentOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/** True when `pid` is a live worker process (`worker/main.ts`) started from the terminal's shell. */
function isWorkerOf(pid: number, t: Terminal): boolean {
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return false;
  }
  if (!cmdline.includes("worker/main.ts")) return false;
  for (let p: number | null = pid; p && p > 1; p = parentOf(p)) if (p === t.child.pid) return true;
  return false;
}

const processExists = (pid: number) => {
  try {
    const state = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return state.slice(state.lastIndexOf(")") + 2, state.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
};

async function freePort(from: number, span: number, host: string): Promise<number> {
  for (let i = 0; i < span; i++) {
    const p = from + Math.floor(Math.random() * span);
    if (await portIsFree(p, host)) return p;
  }
  throw new Error(`no free port in ${from}-${from + span}`);
}

const sqlRows = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => (await db!.query<T>(text, values)).rows;
const sqlNowMs = async () => (await dbNow(db!)).getTime();

// ---------------------------------------------------------------------------------------------
// What the tour carries from one step to the next, as the reader does.

type WorkerView = { id: string; pid: number; partitions: number[] };
type ScheduleView = {
  id: number;
  name: string;
  version: number;
  catchUp: string;
  everySeconds: number;
  leaseSeconds: number;
  jitterSeconds: number;
  retry: { maxAttempts: number; baseSeconds: number; capSeconds: number };
  worstCaseLatenessSeconds: number;
  status?: string;
  [k: string]: unknown;
};
type AttemptView = { attempt: number; workerId: string; outcome: string; error: string | null; startedAt: string; finishedAt: string | null };
type RunView = { id: number; scheduleName: string; scheduledFor: string; state: string; origin: string; attempts: number; leaseOwner: string | null; lastError: string | null; [k: string]: unknown };
type RunDetail = RunView & { attemptsList: AttemptView[] };

let first: Terminal;
let second: Terminal;
let sleepSchedule: ScheduleView;
let pollSeconds = 0;

beforeAll(async () => {
  await ensureBuild((line) => console.log(line));
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "slotkeeper-tour-"));
  fs.chmodSync(dataDir, 0o755); // as root, the embedded server runs as `postgres` and must reach it
  port = await freePort(3400, 500, "0.0.0.0");
  pgPort = await freePort(54400, 500, "127.0.0.1");
}, 600_000);

afterAll(async () => {
  await db?.end().catch(() => {});
  for (const t of terminals) if (!t.gone()) process.kill(-t.child.pid!, "SIGKILL");
  // npm start runs PostgreSQL in a session of its own (lib/db/embedded.ts) and stops it on Ctrl-C;
  // after a failed step it may still run: stop it (fast shutdown) before deleting its folder.
  const pidFile = path.join(dataDir, "pgdata", "postmaster.pid");
  if (dataDir && fs.existsSync(pidFile)) {
    const postmaster = Number(fs.readFileSync(pidFile, "utf8").split("\n")[0]);
    if (processExists(postmaster)) {
      process.kill(postmaster, "SIGINT");
      await waitUntil(() => !processExists(postmaster), 60_000, "the embedded PostgreSQL to stop").catch(() => {});
    }
  }
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}, 120_000);

describe("README.md's five-minute tour, followed word for word", () => {
  it("1. npm start, then npm run worker: two workers share the 16 partitions, 8 each", async () => {
    const [[startLine], [workerLine]] = blocks(1, 2);
    // `npm install` is what this checkout already did; the test runs in the shared tree and does not reinstall.
    const [install, ...rest] = startLine.split(/\s*&&\s*/);
    expect(install).toBe("npm install");
    first = openTerminal(rest.join(" && "));
    const ready = said(1, /Wait for `(slotkeeper: ready in[^`]*)`/, "the line npm start prints when ready")[1];
    await printed(first, quoted(here(ready)), 300_000, `npm start to print "${ready}"`);
    // The test's own view of the database: it joins the embedded server npm start runs, as `npm run worker` does.
    const embedded = await startEmbeddedPostgres({ dir: dataDir, port: pgPort });
    db = new pg.Pool({ connectionString: embedded.url, max: 2 });
    db.on("error", () => {});

    second = openTerminal(workerLine);
    const [, event, share] = said(1, /logs `("event":"[^"]+")` with `("share":\d+)`/, "the lease event and share the second worker logs");
    await printed(second, new RegExp(`^\\{.*${quoted(event).source}.*${quoted(share).source}[,}].*$`, "m"), 60_000, `the second worker to log ${event} with ${share}`);

    const [, partitions, each] = said(1, /divided into (\d+) partitions, and the two workers now hold (\d+) each/, "the partition count and each worker's share").map(Number);
    expect((await sqlRows<{ partitions: number }>("SELECT partitions FROM cluster WHERE id = 1"))[0].partitions).toBe(partitions);
    // The holders, from the lease table on the database clock: two workers, one in each terminal.
    let holders: { owner: string; held: number }[] = [];
    await waitUntil(
      async () => {
        holders = await sqlRows<{ owner: string; held: number }>(
          "SELECT owner, count(*)::int AS held FROM partition_leases WHERE lease_expires_at > sk_now() AND partition < $1 GROUP BY owner ORDER BY owner",
          [partitions],
        );
        return holders.length === 2 && holders.every((h) => h.held === each);
      },
      30_000,
      `two workers holding ${each} partitions each`,
    ).catch((e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(holders)}`);
    });
    const pidOf = (id: string) => Number(/-(\d+)-[^-]+$/.exec(id)?.[1]);
    expect(holders.filter((h) => isWorkerOf(pidOf(h.owner), first)).length, "a holder is npm start's worker").toBe(1);
    expect(holders.filter((h) => isWorkerOf(pidOf(h.owner), second)).length, "a holder is npm run worker").toBe(1);
    // The Workers page's data: both workers with the partitions each holds.
    const { workers } = (await (await fetch(`http://127.0.0.1:${port}/api/workers`)).json()) as { workers: WorkerView[] };
    for (const h of holders) expect(workers.find((w) => w.id === h.owner)?.partitions.length).toBe(each);
  }, 420_000);

  it("2. the schedule is created with the stated defaults and worst case", async () => {
    const [[create]] = blocks(2, 1);
    const body = JSON.parse(/-d '([^']*)'/.exec(create)![1]) as { name: string; everySeconds: number; leaseSeconds: number; payload: { ms: number } };
    const [, every, takes, lease] = said(2, /fires every (\d+) seconds and takes (\d+) seconds .* with a (\d+)-second lease/, "what the job does").map(Number);
    expect([body.everySeconds, body.payload.ms / 1000, body.leaseSeconds]).toEqual([every, takes, lease]);

    // The reader waits up to a period for the first slot (step 3); the test moves the database
    // clock, which every process reads, so that the first slot is FIRST_SLOT_LEAD_MS away. It moves
    // it by less than the partition lease (15 s) forward or the heartbeat window (30 s) back, so no
    // worker's lease or liveness changes.
    const periodMs = body.everySeconds * 1000;
    const now = await sqlNowMs();
    let at = now - (now % periodMs) + periodMs - FIRST_SLOT_LEAD_MS;
    if (at - now > 10_000) at -= periodMs;
    await runClockFrom(db!, new Date(at));

    const { schedule } = await answer<{ schedule: ScheduleView }>(create);
    sleepSchedule = schedule;
    // Every "key":value the step shows: the id, name and version, the status and the worst case.
    const shown = spansOf(2).flatMap(pairsIn);
    expect(shown.length).toBeGreaterThanOrEqual(5);
    for (const [key, value] of shown) expect(schedule[key], `"${key}"`).toEqual(value);
    const [, catchUp, maxAttempts, base, cap] = said(2, /catch-up `(\w+)`, retry (\d+) attempts with (\d+)–(\d+) s backoff/, "the defaults");
    expect([schedule.catchUp, schedule.retry]).toEqual([catchUp, { maxAttempts: Number(maxAttempts), baseSeconds: Number(base), capSeconds: Number(cap) }]);

    // The stored row says the same.
    const [row] = await sqlRows<{ name: string; catch_up: string; every_seconds: number; lease_seconds: number; jitter_seconds: number; retry_max_attempts: number; retry_base_seconds: number; retry_cap_seconds: number }>(
      "SELECT name, catch_up, every_seconds, lease_seconds, jitter_seconds, retry_max_attempts, retry_base_seconds, retry_cap_seconds FROM schedules WHERE id = $1",
      [schedule.id],
    );
    expect(row).toMatchObject({ name: body.name, catch_up: catchUp, every_seconds: every, lease_seconds: lease, retry_max_attempts: Number(maxAttempts), retry_base_seconds: Number(base), retry_cap_seconds: Number(cap) });
    // The worst case is the stated formula over the stored row and the poll interval step 4 states.
    const floor = Number(said(2, /\(jitter \+ 2 × poll interval \+ max\(lease, (\d+) s\)/, "the worst-case formula")[1]);
    pollSeconds = Number(said(4, /the poll interval \((\d+) s\)/, "the poll interval")[1]);
    expect(schedule.worstCaseLatenessSeconds).toBe(Math.ceil(row.jitter_seconds + 2 * pollSeconds + Math.max(row.lease_seconds, floor)));
  }, 60_000);

  let heldRun: RunView;

  it("3. the next slots are written ahead, and one runs at the next :00 or :30", async () => {
    const [[running]] = blocks(3, 1);
    expect(running).toContain(`schedule=${sleepSchedule.name}`);
    const words: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5 };
    const aheadMs = words[said(3, /write slots (\w+) minutes? ahead/, "how far ahead slots are written")[1]] * 60_000;
    const [, mm1, mm2] = said(3, /at every :(\d\d) and :(\d\d) one turns `running`/, "when slots run");

    const { runs } = await answerWhen<{ runs: RunView[] }>(running, (a) => a.runs.length > 0, 60_000, "a running run of the schedule");
    heldRun = runs[0];
    expect(heldRun).toMatchObject({ scheduleName: sleepSchedule.name, state: "running" });
    expect([mm1, mm2].map(Number)).toContain(new Date(heldRun.scheduledFor).getUTCSeconds());
    // The queue row says so too, and names the same holder.
    const [queued] = await sqlRows<{ state: string; lease_owner: string }>("SELECT state, lease_owner FROM run_queue WHERE run_id = $1", [heldRun.id]);
    expect(queued).toEqual({ state: "running", lease_owner: heldRun.leaseOwner });

    // The slots ahead are written, pending, up to the horizon: the last one within a period of it.
    const now = await sqlNowMs();
    const ahead = await sqlRows<{ slot: Date; state: string }>("SELECT scheduled_for AS slot, state FROM run_status WHERE schedule_id = $1 AND scheduled_for > sk_now() ORDER BY scheduled_for", [sleepSchedule.id]);
    expect(ahead.every((r) => r.state === "pending")).toBe(true);
    const last = ahead[ahead.length - 1].slot.getTime();
    expect(last).toBeLessThanOrEqual(now + aheadMs);
    expect(last).toBeGreaterThan(now + aheadMs - sleepSchedule.everySeconds * 1000 - 2 * pollSeconds * 1000);
  }, 90_000);

  it("4. killing the worker that holds the run: another worker takes it over after the lease, the lost attempt recorded lease_expired", async () => {
    const [[kill], [watch]] = blocks(4, 2);
    // The pid is the middle of the worker id (<host>-<pid>-<random>), as the example shows it.
    said(4, /A worker's id is `<host>-<pid>-<random>`/, "what a worker id is made of");
    const example = said(3, /"leaseOwner":"[^"]*?-(\d+)-[0-9a-f]+"/, "an example lease owner")[1];
    const [placeholderPid] = withoutComment(kill).match(/\d+$/) ?? [];
    expect(placeholderPid, "the kill command's pid is the example's").toBe(example);
    const runPlaceholder = said(4, /use your run's id in place of `(\d+)`/, "the run id to replace")[1];

    // "While the run is still running (…; if it finished, take the next one)": re-read it just before the kill.
    const [running] = blocks(3, 1)[0];
    let run = heldRun;
    for (;;) {
      const [q] = await sqlRows<{ state: string; lease_owner: string | null }>("SELECT state, lease_owner FROM run_queue WHERE run_id = $1", [run.id]);
      if (q?.state === "running" && q.lease_owner === run.leaseOwner) break;
      run = (await answerWhen<{ runs: RunView[] }>(running, (a) => a.runs.length > 0, 60_000, "the next running run")).runs[0];
    }
    const victim = run.leaseOwner!;
    const [, host, pidText] = /^(.+)-(\d+)-([0-9a-f]+)$/.exec(victim) ?? [];
    const pid = Number(pidText);
    expect(host).toBe(os.hostname());
    // The other way the tour gives to find the pid: the Workers API lists each worker's "pid".
    const lookup = said(4, /or look it up: `(curl [^`]+)` lists each worker's `"pid"`/, "how to look a worker's pid up")[1];
    expect((await answer<{ workers: WorkerView[] }>(lookup)).workers.find((w) => w.id === victim)?.pid).toBe(pid);

    /** The tour's kill command for `pid`, and what the terminal that started the worker prints. */
    const killWorker = async (pid: number) => {
      // The process table: it is one of the workers the reader started, in one of the two terminals.
      const terminal = isWorkerOf(pid, first) ? first : isWorkerOf(pid, second) ? second : null;
      expect(terminal, `pid ${pid} is a worker started in one of the terminals`).not.toBeNull();
      await sh(withoutComment(kill).replace(/\d+$/, String(pid)));
      const killedAt = await sqlNowMs();
      await waitUntil(() => !processExists(pid), 10_000, `worker ${pid} to be gone`);
      if (terminal === first) {
        const line = said(4, /that terminal prints `([^`]+)`/, "what npm start prints when its worker dies")[1];
        await printed(first, quoted(line), 20_000, `npm start to print "${line}"`);
        // …and starts another worker in its place.
        await waitUntil(
          async () => (await answer<{ workers: WorkerView[] }>(lookup)).workers.some((w) => w.pid !== pid && isWorkerOf(w.pid, first)),
          30_000,
          "npm start's new worker to register",
          250,
        );
      } else {
        const line = said(4, /its terminal prints `([^`]+)`/, "what the second terminal prints")[1];
        await printed(second, new RegExp(`^(.*\\s)?${quoted(line).source}(\\s.*)?$`, "m"), 20_000, `the second terminal to print "${line}"`);
      }
      return { terminal: terminal!, killedAt };
    };
    const { terminal, killedAt } = await killWorker(pid);
    // Nobody renews the lease now: it runs out within the lease of the kill.
    const [lost] = await sqlRows<{ lease_expires_at: Date; attempts: number }>("SELECT lease_expires_at, attempts FROM run_queue WHERE run_id = $1", [run.id]);
    const leaseSeconds = Number(said(4, /Within the lease \((\d+) s\)/, "the lease")[1]);
    expect(leaseSeconds).toBe(sleepSchedule.leaseSeconds);
    expect(lost.attempts).toBe(1);
    expect(lost.lease_expires_at.getTime()).toBeLessThanOrEqual(killedAt + leaseSeconds * 1000);

    const watchRun = here(watch).replace(new RegExp(`/runs/${runPlaceholder}\\b`), `/runs/${run.id}`);
    expect(watchRun).toMatch(new RegExp(`/runs/${run.id}$`));
    const takenOver = await answerWhen<{ run: RunDetail }>(
      watchRun,
      (a) => a.run.state === "running" && a.run.attempts > 1,
      (leaseSeconds + 10 * pollSeconds) * 1000 + 20_000,
      "the run to be running again",
    );
    // `"attempts":2` on another worker, started within the lease plus the poll interval of the kill.
    for (const [key, value] of spansOf(4).flatMap(pairsIn)) expect(takenOver.run[key], `"${key}"`).toEqual(value);
    expect(takenOver.run.leaseOwner).not.toBe(victim);
    // The queue row, read directly: the second attempt, its holder and when it started (run_attempts lists it once it ends).
    const [takeover] = await sqlRows<{ attempts: number; lease_owner: string; started_at: Date }>("SELECT attempts, lease_owner, started_at FROM run_queue WHERE run_id = $1", [run.id]);
    expect([takeover.attempts, takeover.lease_owner]).toEqual([2, takenOver.run.leaseOwner]);
    const tookMs = takeover.started_at.getTime() - killedAt;
    console.log(JSON.stringify({ event: "test:tour:takeover", killedIn: terminal === first ? "npm start" : "npm run worker", tookMs }));
    expect(tookMs).toBeLessThanOrEqual((leaseSeconds + pollSeconds) * 1000 + OBSERVER_TOLERANCE_MS);

    // 25 seconds later done; its attempts tell the story.
    const takes = Number(said(4, /and (\d+) seconds later `done`/, "how long the attempt takes")[1]);
    const done = await answerWhen<{ run: RunDetail }>(watchRun, (a) => a.run.state === "done", (takes + 20) * 1000, "the run to be done");
    const [, lostOutcome, lostError, wonOutcome] = said(4, /attempt 1 on the killed worker, outcome `(\w+)`, error `([^`]+)`; attempt 2 on the other worker, `(\w+)`/, "the attempts");
    const list = done.run.attemptsList;
    expect(list.map((a) => [a.attempt, a.workerId, a.outcome])).toEqual([
      [1, victim, lostOutcome],
      [2, takenOver.run.leaseOwner, wonOutcome],
    ]);
    expect(list[0].error).toMatch(quoted(lostError));
    // The attempt history in the database, read directly.
    const history = await sqlRows<{ attempt: number; worker_id: string; outcome: string; started_at: Date; finished_at: Date }>(
      "SELECT attempt, worker_id, outcome::text, started_at, finished_at FROM run_attempts WHERE run_id = $1 ORDER BY attempt",
      [run.id],
    );
    expect(history.map((a) => [a.attempt, a.worker_id, a.outcome])).toEqual([
      [1, victim, lostOutcome],
      [2, takenOver.run.leaseOwner, wonOutcome],
    ]);
    expect(history[1].started_at).toEqual(takeover.started_at);
    expect(history[1].finished_at.getTime() - history[1].started_at.getTime()).toBeGreaterThanOrEqual(takes * 1000);

    // "Either way": the worker of the other terminal, killed the same way, says so as the tour does.
    const other = terminal === first ? second : first;
    const otherWorker = (await answer<{ workers: WorkerView[] }>(lookup)).workers.find((w) => isWorkerOf(w.pid, other));
    expect(otherWorker, "the other terminal's worker is listed").toBeDefined();
    await killWorker(otherWorker!.pid);
  }, 120_000);

  it("5. a dead run is re-queued after the fix, and its schedule is healthy again", async () => {
    const [[create, runNow], [listDead], [patch, requeue, show]] = blocks(5, 3);
    const { schedule } = await answer<{ schedule: ScheduleView }>(create);
    const { run } = await answer<{ run: RunView }>(runNow);
    const runPlaceholder = said(5, /use your run's id in place of `(\d+)`/, "the run id to replace")[1];
    const runShown = spansOf(5).find((s) => s.startsWith('{"run":'));
    expect(runShown, 'the run-now answer `{"run":…}`').toBeDefined();
    const runPairs = pairsIn(runShown!).filter(([k]) => k !== "id");
    expect(runPairs.length).toBeGreaterThan(0);
    for (const [key, value] of runPairs) expect(run[key], `"${key}"`).toEqual(value);
    expect(pairsIn(runShown!)).toContainEqual(["id", Number(runPlaceholder)]);
    const [row] = await sqlRows<{ schedule_id: string; origin: string }>("SELECT schedule_id, origin::text FROM runs WHERE id = $1", [run.id]);
    expect({ scheduleId: Number(row.schedule_id), origin: row.origin }).toEqual({ scheduleId: schedule.id, origin: run.origin });

    // A moment later: dead, with the handler's error, and the schedule failing.
    const [, deadState] = said(5, /A moment later it is `(\w+)`/, "the state it ends in");
    const lastErrorShown = spansOf(5).find((s) => s.startsWith('"lastError":'))!;
    const { runs } = await answerWhen<{ runs: RunView[] }>(listDead, (a) => a.runs.some((r) => r.id === run.id), 30_000, `run ${run.id} to be listed ${deadState}`);
    const dead = runs.find((r) => r.id === run.id)!;
    expect(dead.state).toBe(deadState);
    for (const [key, value] of pairsIn(lastErrorShown)) expect(dead[key], `"${key}"`).toEqual(value);
    const [stored] = await sqlRows<{ state: string; last_error: string }>("SELECT state::text, last_error FROM runs WHERE id = $1", [run.id]);
    expect(stored).toEqual({ state: deadState, last_error: dead.lastError });
    const [, failingName, failing] = said(5, /shows `([\w-]+)` as \*\*(\w+)\*\*/, "the schedule's status");
    expect(failingName).toBe(schedule.name);
    const statusOf = async () => ((await (await fetch(`http://127.0.0.1:${port}/api/schedules/${schedule.name}`)).json()) as { schedule: ScheduleView }).schedule.status;
    await waitUntil(async () => (await statusOf()) === failing, 30_000, `${schedule.name} to be ${failing}`);

    // The fix names the version it read; then the re-queue and the run again.
    const patchBody = JSON.parse(/-d '([^']*)'/.exec(patch)![1]) as { version: number };
    expect(patchBody.version, "the edit names the version the create answered").toBe(schedule.version);
    const edited = await answer<{ schedule: ScheduleView }>(patch);
    expect(edited.schedule.version).toBe(schedule.version + 1);
    const forRun = (c: string) => {
      const out = c.replace(new RegExp(`/runs/${runPlaceholder}\\b`), `/runs/${run.id}`);
      expect(out, `${c} names the run`).toMatch(new RegExp(`/runs/${run.id}(/|$)`));
      return out;
    };
    const requeued = await answer<Record<string, unknown>>(forRun(requeue));
    const requeuedShown = spansOf(5).find((s) => s.startsWith('{"requeued":'))!;
    expect(pairsIn(requeuedShown)).toEqual([["requeued", Number(runPlaceholder)]]);
    expect(requeued).toEqual({ requeued: run.id });
    const [, doneState, failedOutcome, wonOutcome] = said(5, /then the run is `(\w+)` with two attempts — the (\w+) one and the one that (\w+)/, "how the re-queued run ends");
    const after = await answerWhen<{ run: RunDetail }>(forRun(show), (a) => a.run.state === doneState, 30_000, `run ${run.id} to be ${doneState}`);
    expect(after.run.attemptsList.map((a) => a.outcome)).toEqual([failedOutcome, wonOutcome]);
    const history = await sqlRows<{ outcome: string }>("SELECT outcome::text FROM run_attempts WHERE run_id = $1 ORDER BY attempt", [run.id]);
    expect(history.map((a) => a.outcome)).toEqual([failedOutcome, wonOutcome]);
    const [, healthy] = said(5, /`[\w-]+` is (\w+) again/, "the status after the re-queue");
    await waitUntil(async () => (await statusOf()) === healthy, 30_000, `${schedule.name} to be ${healthy} again`);
  }, 120_000);

  it("6. Ctrl-C stops the second worker, then npm start with its database", async () => {
    said(6, /Ctrl-C in the second terminal \(if that worker still runs\), then in the first/, "how to stop");
    await db?.end();
    db = undefined;
    await ctrlC(second, 30_000);
    await ctrlC(first, 60_000);
    expect(first.output()).toContain("slotkeeper: stopped");
    // The embedded server is down: no postmaster left on its folder.
    expect(fs.existsSync(path.join(dataDir, "pgdata", "postmaster.pid"))).toBe(false);
    const [, removed] = said(6, /`rm -rf ([^`]+)` deletes the embedded database/, "how to delete the database");
    expect(path.resolve(ROOT, removed)).toBe(path.resolve(ROOT, configDefaults.dataDir));
  }, 120_000);
});
