// Attempt output: the bounds and masks (pure), and the finish that stores it (real PostgreSQL):
// only for results that carry some, only where the fence passes, in the same statement.
import { describe, expect, it } from "vitest";
import { MASK, maskText, secretValuesOf } from "../security/mask";
import { setupTestDatabase } from "../testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND } from "../testing/factories";
import { claimRuns } from "./claim";
import { finishRuns } from "./finish";
import { boundResult, LOG_MAX_BYTES, LOG_MAX_LINES, LogTail, logLineOf, RESULT_MAX_BYTES, StreamTail } from "./output";

describe("masking output", () => {
  it("masks the values of sensitive assignments and the payload's secrets, not a fencing token", () => {
    const secrets = secretValuesOf({ headers: { Authorization: "Bearer abc.def.ghi" }, env: { DB_PASSWORD: "pw-1234", TARGET: { $env: "SK_OUT_TEST" } }, note: "visible" }, { SK_OUT_TEST: "ref-value-77" });
    expect(secrets.sort()).toEqual(["Bearer abc.def.ghi", "pw-1234", "ref-value-77"].sort());
    const text = [
      "connecting with pw-1234 to ref-value-77",
      "Authorization: Bearer xyz987",
      '{"api_key": "k-55", "password":"p@ss"}',
      "export SECRET_ACCESS_KEY=AKIA0000",
      "SLOTKEEPER_FENCING_TOKEN=3 X-Fencing-Token: 4",
      "visible",
    ].join("\n");
    expect(maskText(text, secrets).split("\n")).toEqual([
      `connecting with ${MASK} to ${MASK}`,
      `Authorization: Bearer ${MASK}`,
      `{"api_key": "${MASK}", "password":"${MASK}"}`,
      `export SECRET_ACCESS_KEY=${MASK}`,
      "SLOTKEEPER_FENCING_TOKEN=3 X-Fencing-Token: 4",
      "visible",
    ]);
    expect(maskText("a\u0000b", [])).toBe("a\uFFFDb");
  });

  it("bounds a result: small ones as they are, large ones as a marker with their head, unserialisable ones as a note", () => {
    expect(boundResult(undefined, [])).toBeNull();
    expect(boundResult(null, [])).toBeNull();
    expect(boundResult({ n: 1, at: new Date("2030-01-01T00:00:00Z"), token: "t-1" }, [])).toBe(`{"n":1,"at":"2030-01-01T00:00:00.000Z","token":"${MASK}"}`);
    const big = { rows: Array.from({ length: 5000 }, (_, i) => ({ i, name: `row-${i}` })) };
    const marker = JSON.parse(boundResult(big, [])!);
    expect(marker).toMatchObject({ $truncated: true, bytes: Buffer.byteLength(JSON.stringify(big)) });
    expect(JSON.stringify(big).startsWith(marker.head)).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(marker))).toBeLessThanOrEqual(RESULT_MAX_BYTES);
    expect(JSON.parse(boundResult({ n: 10n }, [])!)).toHaveProperty("$unserializable");
  });

  it("keeps the last lines of ctx.log within both bounds, saying how many went", () => {
    const tail = new LogTail(() => ["s3cr3t-value"]);
    for (let i = 0; i < 500; i++) tail.push(logLineOf("info", [{ i }, "line %d with s3cr3t-value", i]));
    const lines = JSON.parse(tail.toJson()!);
    expect(lines[0].msg).toBe(`[${500 - LOG_MAX_LINES} earlier lines not kept]`);
    expect(lines.slice(1).map((l: { i: number }) => l.i)).toEqual(Array.from({ length: LOG_MAX_LINES }, (_, k) => 500 - LOG_MAX_LINES + k));
    expect(lines[1].msg).toBe(`line ${500 - LOG_MAX_LINES} with ${MASK}`);
    const wide = new LogTail(() => []);
    for (let i = 0; i < 100; i++) wide.push(logLineOf("warn", ["y".repeat(2000)]));
    expect(Buffer.byteLength(wide.toJson()!)).toBeLessThanOrEqual(LOG_MAX_BYTES + 200);
    expect(new LogTail(() => []).toJson()).toBeNull();
  });

  it("keeps a stream's tail whole: nothing cut when it fits, the count of what was written when it does not", () => {
    const small = new StreamTail(64, 16);
    small.push(Buffer.from("hello\n"));
    expect(small.text([])).toBe("hello\n");
    const tail = new StreamTail(64, 16);
    for (let i = 0; i < 50; i++) tail.push(Buffer.from(`${String(i).padStart(2, "0")} secret-xyz\n`));
    const text = tail.text(["secret-xyz"])!;
    expect(text.split("\n")[0]).toBe(`[… ${50 * 14} bytes written; the earlier ones are not kept]`);
    expect(text).not.toContain("secret-xyz");
    expect(text.endsWith(`49 ${MASK}\n`)).toBe(true);
    expect(new StreamTail().text([])).toBeNull();
  });
});

describe("storing output in the finish", () => {
  const T0 = new Date("2030-01-01T10:00:00Z");
  const t = setupTestDatabase({ clock: T0 });
  const outputRows = async () => (await t.pool.query("SELECT run_id::int, attempt, result, log, stdout, stderr FROM attempt_output ORDER BY run_id, attempt")).rows;
  const output = { result: '{"ok":true}', log: '[{"time":"2030-01-01T10:00:00.000Z","level":"info","msg":"hi"}]', stdout: "out\n", stderr: null };

  it("writes a row only for the results that carry output, successes and failures alike, in one batch", async () => {
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, retryMaxAttempts: 3 })).id;
    const ids = await makeRuns(t.db, s, [0, 1, 2, 3].map((i) => ({ scheduledFor: new Date(T0.getTime() - i * 1000) })));
    const claimed = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 });
    const by = new Map(claimed.map((c) => [c.id, c]));
    const [quiet, talky, failing, failingQuiet] = ids.map((id) => by.get(id)!);
    const r = await finishRuns(t.db, "w1", [
      { id: quiet.id, attempt: quiet.attempt, scheduleId: s, queueTid: quiet.queueTid, outcome: "succeeded" },
      { id: talky.id, attempt: talky.attempt, scheduleId: s, queueTid: talky.queueTid, outcome: "succeeded", output },
      { id: failing.id, attempt: failing.attempt, scheduleId: s, outcome: "failed", error: "boom", retryDelaySeconds: 0, output: { ...output, result: null, stderr: "err\n" } },
      { id: failingQuiet.id, attempt: failingQuiet.attempt, scheduleId: s, outcome: "failed", error: "boom", retryDelaySeconds: 0 },
    ]);
    expect(r).toEqual({ applied: 4, stale: [] });
    expect(await outputRows()).toEqual([
      { run_id: talky.id, attempt: 1, result: { ok: true }, log: [{ time: "2030-01-01T10:00:00.000Z", level: "info", msg: "hi" }], stdout: "out\n", stderr: null },
      { run_id: failing.id, attempt: 1, result: null, log: [{ time: "2030-01-01T10:00:00.000Z", level: "info", msg: "hi" }], stdout: "out\n", stderr: "err\n" },
    ]);
  });

  it("keeps nothing of a stale result: the output goes with the fence", async () => {
    const s = (await makeSchedule(t.db, RUNS_BY_HAND)).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const [c] = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    const stale = await finishRuns(t.db, "w2", [{ id, attempt: c.attempt, scheduleId: s, queueTid: c.queueTid, outcome: "succeeded", output }]);
    const staleFailure = await finishRuns(t.db, "w1", [{ id, attempt: c.attempt + 1, scheduleId: s, outcome: "failed", error: "x", retryDelaySeconds: 0, output }]);
    expect([stale.stale, staleFailure.stale]).toEqual([[id], [id]]);
    expect(await outputRows()).toEqual([]);
  });
});
