// POST /api/apply and GET /api/export through their route handlers against a real database; the
// database state is read back with plain SQL as the oracle.
import { beforeAll, describe, expect, it } from "vitest";
import { resumeDueSchedules } from "@/lib/schedules/auto-resume";
import { tickOnce } from "@/lib/runs/tick";
import { createLogger } from "@/lib/log";
import { waitUntil } from "@/lib/testing/wait";
import { startAutoResumeLoop } from "@/worker/loops/auto-resume";
import { setClock } from "@/lib/testing/clock";
import { setupTestDatabase } from "@/lib/testing/db";

const t = setupTestDatabase({ routes: true, poolSize: 6 });
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
let applyPost: Handler;
let exportGet: Handler;
let patchOne: Handler;
let pausePost: Handler;
let resumePost: Handler;

beforeAll(async () => {
  applyPost = (await import("./route")).POST as unknown as Handler;
  exportGet = (await import("../export/route")).GET as unknown as Handler;
  patchOne = (await import("../schedules/[name]/route")).PATCH as unknown as Handler;
  pausePost = (await import("../schedules/[name]/pause/route")).POST as unknown as Handler;
  resumePost = (await import("../schedules/[name]/resume/route")).POST as unknown as Handler;
});

const headers = { "content-type": "application/json", origin: "http://127.0.0.1" };
async function apply(body: Record<string, unknown>) {
  const res = await applyPost(new Request("http://127.0.0.1/api/apply", { method: "POST", headers, body: JSON.stringify(body) }), { params: Promise.resolve({}) });
  return { status: res.status, body: await res.json() };
}
const q = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.pool.query(text, values)).rows as T[];
const state = () => q("SELECT name, every_seconds, description, version, managed_by, deleted_at IS NOT NULL AS deleted FROM schedules ORDER BY name, id");
const audits = async () => (await q<{ n: number }>("SELECT count(*)::int AS n FROM audit_log"))[0].n;

const A = { name: "a", handler: "noop", everySeconds: 60 };
const B = { name: "b", handler: "noop", cron: "0 2 * * *", description: "nightly" };

describe("POST /api/apply", () => {
  it("creates, updates (naming the version read), leaves unchanged alone and prunes only its own source", async () => {
    const first = await apply({ source: "ops.yaml", document: `schedules:\n  - name: a\n    handler: noop\n    everySeconds: 60\n  - { name: b, handler: noop, cron: "0 2 * * *", description: nightly }\n` });
    expect(first.body).toMatchObject({ created: ["a", "b"], updated: [], unchanged: [], deleted: [], keptPaused: [] });
    // A console-made schedule: never pruned by a file.
    await t.pool.query("INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition) VALUES ('console', 'noop', 60, now(), 0)");
    const second = await apply({ source: "ops.yaml", prune: true, schedules: [{ ...A, everySeconds: 120 }] });
    expect(second.body).toMatchObject({ created: [], updated: ["a"], unchanged: [], deleted: ["b"], changes: [{ name: "a", version: 1, fields: ["everySeconds"] }] });
    expect(await state()).toEqual([
      { name: "a", every_seconds: 120, description: "", version: 2, managed_by: "ops.yaml", deleted: false },
      { name: "b", every_seconds: null, description: "nightly", version: 2, managed_by: "ops.yaml", deleted: true },
      { name: "console", every_seconds: 60, description: "", version: 1, managed_by: null, deleted: false },
    ]);
    expect(await q("SELECT action, target_id FROM audit_log ORDER BY id")).toEqual([
      { action: "schedule.create", target_id: "a" },
      { action: "schedule.create", target_id: "b" },
      { action: "schedule.update", target_id: "a" },
      { action: "schedule.delete", target_id: "b" },
    ]);
  });

  it("re-applying the same file writes nothing: no version, audit entry or run changes", async () => {
    await apply({ source: "s", schedules: [A, B] });
    await t.pool.query("INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, max_attempts) SELECT id, partition, now(), now(), now(), 6 FROM schedules");
    const before = { state: await state(), audits: await audits(), runs: await q("SELECT * FROM runs ORDER BY id"), xmin: await q("SELECT xmin::text FROM schedules ORDER BY id") };
    const again = await apply({ source: "s", schedules: [B, { ...A, retry: { maxAttempts: 6 } }] });
    expect(again.body).toMatchObject({ created: [], updated: [], unchanged: ["b", "a"], deleted: [] });
    expect({ state: await state(), audits: await audits(), runs: await q("SELECT * FROM runs ORDER BY id"), xmin: await q("SELECT xmin::text FROM schedules ORDER BY id") }).toEqual(before);
  });

  it("a bad file (an error in the 3rd schedule) changes nothing and names the schedule and field", async () => {
    await apply({ source: "s", schedules: [A] });
    const before = { state: await state(), audits: await audits() };
    const bad = await apply({ source: "s", prune: true, schedules: [{ ...A, everySeconds: 5 }, B, { name: "c", handler: "noop", cron: "61 * * * *" }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "validation", field: "schedules[2].cron" });
    expect(bad.body.error.message).toContain('("c")');
    const dup = await apply({ source: "s", schedules: [A, B, A] });
    expect([dup.status, dup.body.error.field]).toEqual([400, "schedules[2].name"]);
    const payload = await apply({ source: "s", schedules: [B, { ...A, everySeconds: 7 }, { name: "c", handler: "noop", payload: { token: "••••••••" }, everySeconds: 60 }] });
    // Refused inside the mutations, after a and b were written in the same transaction.
    expect([payload.status, payload.body.error.field]).toEqual([400, "schedules[2].payload"]);
    const yaml = await apply({ source: "s", document: "schedules: [ {" });
    expect([yaml.status, yaml.body.error.field]).toEqual([400, "document"]);
    expect({ state: await state(), audits: await audits() }).toEqual(before);
  });

  it("a dry run plans and writes nothing", async () => {
    const dry = await apply({ source: "s", dryRun: true, schedules: [A] });
    expect(dry.body).toMatchObject({ created: ["a"] });
    expect(await state()).toEqual([]);
    expect(await audits()).toBe(0);
  });

  it("a dry run refuses what the apply would refuse, the mutations' own checks included", async () => {
    // A masked secret in a new schedule is refused by the create itself, not by the file's parse.
    const masked = { name: "c", handler: "noop", payload: { token: "••••••••" }, everySeconds: 60 };
    const plan = await apply({ source: "s", dryRun: true, schedules: [A, masked] });
    const real = await apply({ source: "s", schedules: [A, masked] });
    expect([plan.status, plan.body.error?.field]).toEqual([400, "schedules[1].payload"]);
    expect([real.status, real.body.error?.field]).toEqual([plan.status, plan.body.error?.field]);
    expect({ state: await state(), audits: await audits() }).toEqual({ state: [], audits: 0 });
  });

  it("two applies at once (two connections) end as one of the two serial orders", async () => {
    const one = [{ ...A, description: "one" }, { ...B, description: "one" }];
    const two = [{ ...B, description: "two" }, { ...A, description: "two" }, { name: "c", handler: "noop", everySeconds: 30 }];
    const desc = () => q("SELECT name, description FROM schedules WHERE deleted_at IS NULL ORDER BY name");
    for (let round = 0; round < 5; round++) {
      await t.pool.query("TRUNCATE schedules, audit_log RESTART IDENTITY CASCADE");
      const [r1, r2] = await Promise.all([apply({ source: "s", prune: true, schedules: one }), apply({ source: "s", prune: true, schedules: two })]);
      expect([r1.status, r2.status]).toEqual([200, 200]);
      const got = await desc();
      const oneThenTwo = [{ name: "a", description: "two" }, { name: "b", description: "two" }, { name: "c", description: "" }];
      const twoThenOne = [{ name: "a", description: "one" }, { name: "b", description: "one" }];
      expect([oneThenTwo, twoThenOne]).toContainEqual(got);
      // Each apply saw the other's result whole.
      if (got.length === 3) {
        expect([r1.body.created, r2.body.created, r2.body.updated]).toEqual([["a", "b"], ["c"], ["b", "a"]]);
      } else {
        expect([r2.body.created, r1.body.updated, r1.body.deleted]).toEqual([["b", "a", "c"], ["a", "b"], ["c"]]);
      }
    }
  });

  it("export then plan: everything unchanged (JSON and YAML), secrets masked", async () => {
    await apply({ source: "s", schedules: [A, { ...B, payload: { url: "https://example.test", headers: { authorization: "Bearer sekret" } }, handler: "noop", tags: ["x"] }] });
    const json = await exportGet(new Request("http://127.0.0.1/api/export"), { params: Promise.resolve({}) });
    const text = await json.text();
    expect(text).not.toContain("sekret");
    const round = await apply({ source: "other", dryRun: true, schedules: (JSON.parse(text) as { schedules: unknown[] }).schedules });
    expect(round.body).toMatchObject({ created: [], updated: [], unchanged: ["a", "b"] });
    const yaml = await exportGet(new Request("http://127.0.0.1/api/export?format=yaml"), { params: Promise.resolve({}) });
    expect(yaml.headers.get("content-type")).toContain("yaml");
    const roundYaml = await apply({ source: "s", schedules: undefined, document: await yaml.text() });
    expect(roundYaml.body).toMatchObject({ created: [], updated: [], unchanged: ["a", "b"] });
  });

  it("drift: an API edit of a managed schedule shows drifted fields; the next apply puts the file back", async () => {
    await apply({ source: "s", schedules: [A] });
    const res = await patchOne(new Request("http://127.0.0.1/api/schedules/a", { method: "PATCH", headers, body: JSON.stringify({ version: 1, description: "by hand" }) }), { params: Promise.resolve({ name: "a" }) });
    expect((await res.json()).schedule).toMatchObject({ managedBy: "s", drifted: true, driftedFields: ["description"] });
    const again = await apply({ source: "s", schedules: [A] });
    expect(again.body).toMatchObject({ updated: ["a"], changes: [{ name: "a", version: 2, fields: ["description"] }] });
    expect(await q("SELECT description, version FROM schedules")).toEqual([{ description: "", version: 3 }]);
  });

  const pause = async (name: string, body?: unknown) => {
    const init: RequestInit = { method: "POST", headers: body === undefined ? { origin: "http://127.0.0.1" } : headers, body: body === undefined ? undefined : JSON.stringify(body) };
    const res = await pausePost(new Request(`http://127.0.0.1/api/schedules/${name}/pause`, init), { params: Promise.resolve({ name }) });
    return { status: res.status, body: await res.json() };
  };

  it("pause with a note: kept paused across apply (the file's other fields still apply); resume clears the note", async () => {
    await setClock(t.pool, "2024-03-01T10:00:00Z");
    await apply({ source: "s", schedules: [A] });
    expect((await pause("a", { note: "" })).body.error.field).toBe("note");
    expect((await pause("a", { resumeAt: "2024-03-01T09:00:00Z" })).body.error.field).toBe("resumeAt");
    expect((await pause("a", { bogus: 1 })).body.error.field).toBe("bogus");
    expect(await q("SELECT enabled, version FROM schedules")).toEqual([{ enabled: true, version: 1 }]);
    const paused = await pause("a", { note: "vendor outage" });
    expect(paused.body.schedule).toMatchObject({ enabled: false, pausedNote: "vendor outage", drifted: false });
    const again = await apply({ source: "s", schedules: [{ ...A, description: "new" }] });
    expect(again.body).toMatchObject({ updated: ["a"], keptPaused: [{ name: "a", note: "vendor outage" }] });
    expect(await q("SELECT enabled, description, paused_note FROM schedules")).toEqual([{ enabled: false, description: "new", paused_note: "vendor outage" }]);
    const res = await resumePost(new Request("http://127.0.0.1/api/schedules/a/resume", { method: "POST", headers: { origin: "http://127.0.0.1" } }), { params: Promise.resolve({ name: "a" }) });
    expect((await res.json()).schedule).toMatchObject({ enabled: true, pausedNote: null, drifted: false });
    // A pause without a note is drift, and the file's enabled: true puts it back.
    await pause("a");
    expect((await apply({ source: "s", schedules: [{ ...A, description: "new" }] })).body).toMatchObject({ updated: ["a"], keptPaused: [], changes: [{ fields: ["enabled"] }] });
    expect(await q("SELECT enabled FROM schedules")).toEqual([{ enabled: true }]);
  });

  it("auto-resume: the pass resumes schedules whose resumeAt passed by the database clock, with catch-up", async () => {
    await setClock(t.pool, "2024-03-01T10:00:00Z");
    await apply({ source: "s", schedules: [{ name: "a", handler: "noop", everySeconds: 300, catchUp: "latest" }, { name: "later", handler: "noop", everySeconds: 300 }] });
    expect((await pause("a", { note: "maintenance", resumeAt: "2024-03-01T10:30:00Z" })).status).toBe(200);
    expect((await pause("later", { resumeAt: "2024-03-01T11:30:00Z" })).status).toBe(200);
    await setClock(t.pool, "2024-03-01T10:29:00Z");
    expect(await resumeDueSchedules(t.db)).toEqual({ resumed: [] });
    await setClock(t.pool, "2024-03-01T10:31:00Z");
    expect(await resumeDueSchedules(t.db)).toEqual({ resumed: ["a"] });
    expect(await q("SELECT name, enabled, paused_note, resume_at FROM schedules ORDER BY name")).toEqual([
      { name: "a", enabled: true, paused_note: null, resume_at: null },
      { name: "later", enabled: false, paused_note: null, resume_at: new Date("2024-03-01T11:30:00Z") },
    ]);
    expect(await q("SELECT actor, action FROM audit_log WHERE action = 'schedule.resume'")).toEqual([{ actor: "system", action: "schedule.resume" }]);
    // The slots missed while paused (10:00, the first, never ticked, … 10:30) meet catch-up latest: the newest runs, the 6 before it coalesced.
    await tickOnce(t.db, { partitions: null, horizonSeconds: 120, graceSeconds: 30 });
    expect(await q("SELECT to_char(scheduled_for, 'HH24:MI') AS slot, state, origin, skip_reason, skipped_count FROM runs ORDER BY scheduled_for")).toEqual([
      { slot: "10:00", state: "skipped", origin: "schedule", skip_reason: "coalesced", skipped_count: 6 },
      { slot: "10:30", state: "pending", origin: "catch_up", skip_reason: null, skipped_count: null },
    ]);
  });

  it("the worker's auto-resume loop resumes a schedule once the database clock passes resumeAt", async () => {
    await setClock(t.pool, "2024-03-01T10:00:00Z");
    await apply({ source: "s", schedules: [A] });
    await pause("a", { resumeAt: "2024-03-01T10:05:00Z" });
    const loop = startAutoResumeLoop({ db: t.db, log: createLogger("test"), intervalMs: 20 });
    try {
      await setClock(t.pool, "2024-03-01T10:05:01Z");
      await waitUntil(async () => (await q<{ enabled: boolean }>("SELECT enabled FROM schedules"))[0].enabled, 10_000, "the loop to resume a");
    } finally {
      await loop.stop();
    }
    expect(await q("SELECT version, resume_at FROM schedules")).toEqual([{ version: 3, resume_at: null }]);
  });
});
