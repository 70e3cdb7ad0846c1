// `command` runs and attempt output end to end: real worker processes (`npm run worker`) and an
// in-process runWorker with a custom handler, against a real PostgreSQL. What an operator reads is
// checked where the API reads it (getRunDetail, listWorkers).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../lib/config";
import { defineHandler, NonRetryableError } from "../lib/handlers/types";
import { getRunDetail } from "../lib/runs/history";
import { RESULT_MAX_BYTES } from "../lib/runs/output";
import { MASK } from "../lib/security/mask";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND } from "../lib/testing/factories";
import { waitForRun } from "../lib/testing/runs";
import { spawnWorker, startWorkers } from "../lib/testing/spawn";
import { listWorkers } from "../lib/workers/queries";
import { runWorker } from "./index";

// The real clock: the workers' runs are due now. Each test starts from empty tables.
const t = setupTestDatabase();
let dir: string;
const NODE = process.execPath;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "sk-command-runs-"));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A schedule whose runs the test makes, with this handler and payload; its id. */
const schedule = async (handler: string, payload: unknown = {}) => (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler, payload })).id;
const now = async () => new Date((await t.pool.query<{ now: Date }>("SELECT sk_now() AS now")).rows[0].now);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
};

describe("which workers run programs", () => {
  it("only a worker started with SLOTKEEPER_COMMANDS registers `command`, and the registry says what it may run", async () => {
    await startWorkers(t.url, ["plain"]);
    await startWorkers(t.url, ["runner"], { SLOTKEEPER_COMMANDS: `/bin/sh, ${NODE}` });
    await startWorkers(t.url, ["anything"], { SLOTKEEPER_COMMANDS: "all" });
    const byId = Object.fromEntries((await listWorkers(t.db)).map((w) => [w.id, w]));
    expect(byId.plain.commands).toBeNull();
    expect(byId.plain.handlers.map((h) => h.name)).not.toContain("command");
    expect(byId.runner.commands).toEqual(["/bin/sh", NODE]);
    expect(byId.runner.handlers.map((h) => h.name)).toContain("command");
    expect(byId.anything.commands).toBe("all");
  }, 120_000);

  it("a worker refuses to start on a SLOTKEEPER_COMMANDS entry that is not an absolute path, naming it", async () => {
    const w = spawnWorker(t.url, "bad", { SLOTKEEPER_COMMANDS: "/bin/sh,backup" });
    expect(await w.exited).toBe(1);
    expect(w.stderr()).toContain('invalid SLOTKEEPER_COMMANDS: "backup" is not an absolute path');
  }, 60_000);
});

describe("command runs on a worker", () => {
  it("a program's run: done with its stdout and stderr kept (masked); a listed exit code sends it dead on its first attempt", async () => {
    await startWorkers(t.url, ["cmd"], { SLOTKEEPER_COMMANDS: "/bin/sh" });
    const ok = await schedule("command", { command: 'echo "key=$SLOTKEEPER_IDEMPOTENCY_KEY using $API_TOKEN"; echo done >&2', shell: true, env: { API_TOKEN: "literal-secret-123" } });
    const bad = await schedule("command", { command: "/bin/sh", args: ["-c", "echo no such bucket >&2; exit 2"], nonRetryableExitCodes: [2] });
    const at = await now();
    const [okRun] = await makeRuns(t.db, ok, [{ scheduledFor: at }]);
    const [badRun] = await makeRuns(t.db, bad, [{ scheduledFor: at }]);
    await waitForRun(t.pool, okRun, (r) => r.state === "done", 30_000);
    await waitForRun(t.pool, badRun, (r) => r.state === "dead", 30_000);

    const done = await getRunDetail(t.db, okRun);
    expect(done.attemptsList).toHaveLength(1);
    expect(done.attemptsList[0].output).toEqual({ result: { exitCode: 0 }, log: [], stdout: `key=${done.idempotencyKey} using ${MASK}\n`, stderr: "done\n" });

    const dead = await getRunDetail(t.db, badRun);
    expect(dead.attempts).toBe(1);
    expect(dead.attemptsList[0]).toMatchObject({ outcome: "failed", error: "NonRetryableError: command exited with code 2 (listed in payload.nonRetryableExitCodes)", output: { stderr: "no such bucket\n", stdout: null, result: null } });
  }, 120_000);

  it("SIGTERM to the worker mid-program: the run is released, and the program's group (a child ignoring SIGTERM too) is gone once the worker exits", async () => {
    const pidFile = path.join(dir, "family.json");
    const script = path.join(dir, "family.mjs");
    fs.writeFileSync(
      script,
      `import { spawn } from "node:child_process";
       const ready = "require('fs').writeFileSync(" + ${JSON.stringify(JSON.stringify(pidFile))} + ", JSON.stringify({ leader: process.ppid, child: process.pid }))";
       spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); " + ready + "; setInterval(() => {}, 1000)"], { stdio: "inherit" });
       setInterval(() => {}, 1000);`,
    );
    const [w] = await startWorkers(t.url, ["stopping"], { SLOTKEEPER_COMMANDS: NODE, SLOTKEEPER_SHUTDOWN_GRACE_MS: "300" });
    const s = await schedule("command", { command: NODE, args: [script], killGraceSeconds: 60 });
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: await now() }]);
    const deadline = Date.now() + 30_000;
    while (!(fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").includes("}"))) {
      if (Date.now() > deadline) throw new Error("the program did not start");
      await new Promise((r) => setTimeout(r, 50));
    }
    const { leader, child } = JSON.parse(fs.readFileSync(pidFile, "utf8"));
    w.signal("SIGTERM");
    expect(await w.exited).toBe(0);
    // The grace (60 s) has not passed: the worker's exit itself ended the group.
    const end = Date.now() + 10_000;
    while (alive(leader) || alive(child)) {
      if (Date.now() > end) throw new Error(`program still running after the worker exited: leader ${alive(leader)}, child ${alive(child)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const run = await getRunDetail(t.db, id);
    expect(run.state).toBe("pending");
    expect(run.attemptsList.map((a) => a.outcome)).toEqual(["aborted"]);
  }, 120_000);
});

describe("handler output", () => {
  it("a custom handler's ctx.log lines and result are kept with the attempt (masked, bounded) and still written to the worker's log; a run without output writes no output row", async () => {
    const logged: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, cb) => (logged.push(String(chunk)), cb()) });
    process.env.SK_TEST_REPORT_KEY = "report-key-9f8e7d";
    const report = defineHandler<{ rows: number; apiKey: unknown }>({
      name: "report",
      idempotent: true,
      description: "test",
      run: (ctx) => {
        ctx.log.info({ event: "report:start", rows: ctx.payload.rows }, "building %d rows", ctx.payload.rows);
        ctx.log.child({ part: "upload" }).warn(`uploading with ${String(ctx.payload.apiKey)}`);
        ctx.log.debug("not at the worker's level: not kept");
        if (ctx.payload.rows < 0) throw new NonRetryableError("negative rows");
        return { rows: ctx.payload.rows, url: "https://reports.example/1", secret: "shown?" };
      },
    });
    const big = defineHandler({ name: "big", idempotent: true, description: "test", run: () => ({ blob: "x".repeat(RESULT_MAX_BYTES * 2) }) });
    const config = loadConfig({ DATABASE_URL: t.url, SLOTKEEPER_POLL_INTERVAL_MS: "100", SLOTKEEPER_WORKER_ID: "in-process", LOG_LEVEL: "info" });
    const worker = await runWorker({ config, handlers: [report, big], log: pino({ level: "info" }, sink) });
    try {
      const withOutput = await schedule("report", { rows: 3, apiKey: { $env: "SK_TEST_REPORT_KEY" } });
      const failing = await schedule("report", { rows: -1, apiKey: "plain" });
      const large = await schedule("big");
      const quiet = await schedule("noop");
      const at = await now();
      const [a] = await makeRuns(t.db, withOutput, [{ scheduledFor: at }]);
      const [b] = await makeRuns(t.db, failing, [{ scheduledFor: at }]);
      const [c] = await makeRuns(t.db, large, [{ scheduledFor: at }]);
      const [d] = await makeRuns(t.db, quiet, [{ scheduledFor: at }]);
      for (const [id, state] of [[a, "done"], [b, "dead"], [c, "done"], [d, "done"]] as const) await waitForRun(t.pool, id, (r) => r.state === state, 30_000);

      const out = (await getRunDetail(t.db, a)).attemptsList[0].output!;
      expect(out.result).toEqual({ rows: 3, url: "https://reports.example/1", secret: MASK });
      expect(out.log.map(({ time, ...rest }) => (expect(Date.parse(time)).toBeGreaterThan(0), rest))).toEqual([
        { level: "info", msg: "building 3 rows", event: "report:start", rows: 3 },
        { level: "warn", msg: `uploading with ${MASK}`, part: "upload" },
      ]);
      expect([out.stdout, out.stderr]).toEqual([null, null]);
      // The worker's own JSON log has the lines as before, with the run's bindings.
      const lines = logged.flatMap((l) => l.split("\n")).filter(Boolean).map((l) => JSON.parse(l));
      expect(lines.find((l) => l.event === "report:start" && l.runId === a)).toMatchObject({ msg: "building 3 rows", rows: 3, schedule: expect.any(String) });

      const failed = (await getRunDetail(t.db, b)).attemptsList[0];
      expect(failed).toMatchObject({ outcome: "failed", error: "NonRetryableError: negative rows" });
      // "plain" is a literal under a sensitive key (apiKey): a secret too.
      expect(failed.output!.log.map((l) => l.msg)).toEqual(["building -1 rows", `uploading with ${MASK}`]);
      expect(failed.output!.result).toBeNull();

      const truncated = (await getRunDetail(t.db, c)).attemptsList[0];
      expect(truncated.outcome).toBe("succeeded");
      expect(truncated.output!.result).toMatchObject({ $truncated: true, bytes: JSON.stringify({ blob: "x".repeat(RESULT_MAX_BYTES * 2) }).length });
      expect(JSON.stringify(truncated.output!.result).length).toBeLessThanOrEqual(RESULT_MAX_BYTES + 100);

      expect((await getRunDetail(t.db, d)).attemptsList[0].output).toBeNull();
      const rows = await t.pool.query("SELECT run_id FROM attempt_output ORDER BY run_id");
      expect(rows.rows.map((r) => Number(r.run_id))).toEqual([a, b, c]);
      // The no-op's first-attempt success stayed on its run row alone (no attempts row either).
      expect((await t.pool.query("SELECT count(*)::int AS n FROM attempts WHERE run_id = $1", [d])).rows[0].n).toBe(0);
    } finally {
      await worker.stop();
    }
  }, 120_000);
});
