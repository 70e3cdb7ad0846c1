// A schedule's timeoutSeconds, end to end: real worker processes (`npm run worker` and a worker
// with custom handlers), real programs and a receiver outside the product as witnesses, and the
// attempts as the API reads them (getRunDetail over run_attempts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getRunDetail } from "../lib/runs/history";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND } from "../lib/testing/factories";
import { startReceiver } from "../lib/testing/receiver";
import { waitForRun } from "../lib/testing/runs";
import { startWorkers } from "../lib/testing/spawn";
import { waitUntil } from "../lib/testing/wait";

// The real clock: the workers' runs are due now, and the timeouts run on the workers' clocks.
const t = setupTestDatabase();
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "sk-timeouts-"));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const now = async () => new Date((await t.pool.query<{ now: Date }>("SELECT sk_now() AS now")).rows[0].now);
const TIMED_OUT = "timed out after 1 s (the schedule's timeoutSeconds)";

describe("an attempt past its schedule's timeoutSeconds", () => {
  it("a program is stopped (its group gets SIGTERM), the attempt is timed_out and retried by the policy until one finishes in time", async () => {
    const out = path.join(dir, "program.log");
    // The program writes its own record: when each attempt started and when it got SIGTERM. The
    // third attempt finishes at once.
    const script = `echo "start $SLOTKEEPER_ATTEMPT" >> "$OUT"
      if [ "$SLOTKEEPER_ATTEMPT" = 3 ]; then exit 0; fi
      trap 'echo "term $SLOTKEEPER_ATTEMPT" >> "$OUT"; exit 143' TERM
      sleep 60 & wait`;
    await startWorkers(t.url, ["timeouts-cmd"], { SLOTKEEPER_COMMANDS: "/bin/sh" });
    const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "command", payload: { command: script, shell: true, env: { OUT: out }, killGraceSeconds: 5 }, timeoutSeconds: 1, retryMaxAttempts: 3, retryBaseSeconds: 0, retryCapSeconds: 0 });
    const [id] = await makeRuns(t.db, s.id, [{ scheduledFor: await now() }]);
    await waitForRun(t.pool, id, (r) => r.state === "done", 60_000);

    expect(fs.readFileSync(out, "utf8").trim().split("\n")).toEqual(["start 1", "term 1", "start 2", "term 2", "start 3"]);
    const run = await getRunDetail(t.db, id);
    expect(run.attempts).toBe(3);
    expect(run.attemptsList.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
      [1, "timed_out", TIMED_OUT],
      [2, "timed_out", TIMED_OUT],
      [3, "succeeded", null],
    ]);
    for (const a of run.attemptsList.slice(0, 2)) expect(a.durationMs).toBeGreaterThanOrEqual(1000);
    const rows = await t.pool.query<{ attempt: number; outcome: string }>("SELECT attempt, outcome::text FROM attempts WHERE run_id = $1 ORDER BY attempt", [id]);
    expect(rows.rows).toEqual([{ attempt: 1, outcome: "timed_out" }, { attempt: 2, outcome: "timed_out" }, { attempt: 3, outcome: "succeeded" }]);
  }, 120_000);

  it("a handler that ignores its signal is not waited for: each attempt is recorded timed_out at the timeout, and the run goes dead after maxAttempts", async () => {
    // At each report the handler is still running (it waits for the answer), so the attempts read
    // before answering are those the worker recorded before the handler returned. The answer waits
    // (up to 30 s) for the reporting attempt's record: a busy machine may write it late, but a
    // worker that records an attempt only once its handler returns never writes it while the
    // handler is held here.
    let id = 0;
    const attemptsOf = async () => (await t.pool.query<{ attempt: number; outcome: string }>("SELECT attempt, outcome::text FROM attempts WHERE run_id = $1 ORDER BY attempt", [id])).rows;
    const recordedAtReport: { attempt: number; recorded: { attempt: number; outcome: string }[] }[] = [];
    const receiver = await startReceiver(() => 200, {
      before: async (req) => {
        const { attempt } = req.body as { attempt: number };
        await waitUntil(async () => (await attemptsOf()).some((a) => a.attempt === attempt), 30_000, `attempt ${attempt}'s record`).catch(() => undefined);
        recordedAtReport.push({ attempt, recorded: await attemptsOf() });
      },
    });
    try {
      // The handler waits 3 s whatever its signal says, then reports to the receiver.
      await startWorkers(t.url, ["timeouts-stubborn"], { SK_TEST_HANDLERS: "stubborn", SK_TEST_RECEIVER: receiver.url, SK_TEST_DELAY_MS: "3000" }, { script: "lib/testing/handler-worker.ts" });
      const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "stubborn", timeoutSeconds: 1, retryMaxAttempts: 2, retryBaseSeconds: 0, retryCapSeconds: 0 });
      [id] = await makeRuns(t.db, s.id, [{ scheduledFor: await now() }]);
      await waitForRun(t.pool, id, (r) => r.state === "dead", 60_000);

      const run = await getRunDetail(t.db, id);
      expect(run.attemptsList.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
        [1, "timed_out", TIMED_OUT],
        [2, "timed_out", TIMED_OUT],
      ]);
      for (const a of run.attemptsList) expect(a.durationMs).toBeGreaterThanOrEqual(1000);
      // The handler's own effect: it did finish both attempts, after its signal had fired, and neither counted as a success.
      await waitUntil(() => recordedAtReport.length >= 2, 80_000, "the handler to report both attempts");
      expect(receiver.received.map((r) => r.body)).toEqual([
        { handler: "stubborn", workerId: "timeouts-stubborn", runId: id, attempt: 1, signalAborted: true },
        { handler: "stubborn", workerId: "timeouts-stubborn", runId: id, attempt: 2, signalAborted: true },
      ]);
      // Recorded when the timeout fired, not when the handler got round to returning: each attempt
      // was already timed_out while its handler was still waiting to report.
      expect(recordedAtReport.map((r) => r.recorded.find((a) => a.attempt === r.attempt)?.outcome)).toEqual(["timed_out", "timed_out"]);
      expect((await getRunDetail(t.db, id)).state).toBe("dead");
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
