// timeoutSeconds through the schedule API, schedules as code and export, against a real database
// read back with plain SQL: validation names the field and writes nothing; the value reaches the
// run_settings row the claim hands a worker, for queued runs too.
import { beforeAll, describe, expect, it } from "vitest";
import { claimRuns } from "@/lib/runs/claim";
import { setupTestDatabase } from "@/lib/testing/db";
import { makeRuns } from "@/lib/testing/factories";

const t = setupTestDatabase({ routes: true, reset: false });
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const h: Record<string, Handler> = {};

beforeAll(async () => {
  h.create = (await import("./route")).POST as unknown as Handler;
  h.read = (await import("./[name]/route")).GET as unknown as Handler;
  h.patch = (await import("./[name]/route")).PATCH as unknown as Handler;
  h.apply = (await import("../apply/route")).POST as unknown as Handler;
  h.export = (await import("../export/route")).GET as unknown as Handler;
});

async function call(handler: string, path: string, opts: { method?: string; body?: unknown; name?: string } = {}) {
  const init: RequestInit = { method: opts.method ?? "GET", headers: { "content-type": "application/json", origin: "http://127.0.0.1" } };
  if (opts.body !== undefined) init.body = JSON.stringify(opts.body);
  const res = await h[handler](new Request(`http://127.0.0.1${path}`, init), { params: Promise.resolve({ name: opts.name ?? "" }) });
  return { status: res.status, body: await res.json() };
}
const q = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.pool.query(text, values)).rows as T[];

describe("timeoutSeconds", () => {
  it("is refused unless a whole number of seconds from 1 to a day (400 naming it), and nothing is saved", async () => {
    const before = await q("SELECT count(*)::int AS n FROM schedules");
    for (const bad of [0, -5, 1.5, "60", 86_401]) {
      const r = await call("create", "/api/schedules", { method: "POST", body: { name: "refused", handler: "noop", everySeconds: 60, timeoutSeconds: bad } });
      expect([r.status, r.body.error.code, r.body.error.field], String(bad)).toEqual([400, "validation", "timeoutSeconds"]);
      expect(r.body.error.message).toContain("timeoutSeconds");
    }
    expect(await q("SELECT count(*)::int AS n FROM schedules")).toEqual(before);
  });

  it("is saved, shown, edited and cleared; the queued runs' settings carry it to the claim", async () => {
    const made = await call("create", "/api/schedules", { method: "POST", body: { name: "with-timeout", handler: "noop", everySeconds: 60, enabled: false, timeoutSeconds: 90 } });
    expect(made.status).toBe(201);
    expect(made.body.schedule).toMatchObject({ timeoutSeconds: 90, stuck: false, stuckSince: null });
    const plain = await call("create", "/api/schedules", { method: "POST", body: { name: "no-timeout", handler: "noop", everySeconds: 60, enabled: false } });
    expect(plain.body.schedule.timeoutSeconds).toBeNull();
    const settings = async (name: string) => (await q<{ timeout_seconds: number | null }>("SELECT rs.timeout_seconds FROM schedules s JOIN run_settings rs ON rs.id = s.settings_id WHERE s.name = $1", [name]))[0].timeout_seconds;
    expect([await settings("with-timeout"), await settings("no-timeout")]).toEqual([90, null]);

    const id = made.body.schedule.id as number;
    const [runId] = await makeRuns(t.db, id, [{ scheduledFor: new Date(Date.now() - 1000) }]);
    const edited = await call("patch", "/api/schedules/with-timeout", { method: "PATCH", name: "with-timeout", body: { version: 1, timeoutSeconds: 5 } });
    expect([edited.status, edited.body.schedule.timeoutSeconds]).toEqual([200, 5]);
    expect((await call("read", "/api/schedules/with-timeout", { name: "with-timeout" })).body.schedule.timeoutSeconds).toBe(5);
    // The run queued before the edit is claimed with the edited timeout.
    const claimed = await claimRuns(t.db, { workerId: "w-test", partitions: null, limit: 10 });
    expect(claimed.map((r) => [r.id, r.timeoutSeconds])).toEqual([[runId, 5]]);

    const cleared = await call("patch", "/api/schedules/with-timeout", { method: "PATCH", name: "with-timeout", body: { version: 2, timeoutSeconds: null } });
    expect(cleared.body.schedule.timeoutSeconds).toBeNull();
    expect(await settings("with-timeout")).toBeNull();
    const bad = await call("patch", "/api/schedules/with-timeout", { method: "PATCH", name: "with-timeout", body: { version: 3, timeoutSeconds: 0 } });
    expect([bad.status, bad.body.error.field]).toEqual([400, "timeoutSeconds"]);
    expect((await q("SELECT version, timeout_seconds FROM schedules WHERE name = 'with-timeout'"))[0]).toEqual({ version: 3, timeout_seconds: null });
  });

  it("round-trips through schedules as code: applied, exported, a changed file updates it, a bad one names schedules[i].timeoutSeconds", async () => {
    const doc = { source: "timeouts-test", schedules: [{ name: "coded", handler: "noop", everySeconds: 300, enabled: false, timeoutSeconds: 120 }] };
    expect((await call("apply", "/api/apply", { method: "POST", body: doc })).body.created).toEqual(["coded"]);
    const exported = (await call("export", "/api/export")).body.schedules as Record<string, unknown>[];
    expect(exported.find((s) => s.name === "coded")).toMatchObject({ timeoutSeconds: 120 });
    expect(exported.find((s) => s.name === "no-timeout")).toMatchObject({ timeoutSeconds: null });
    // Applying the export back changes nothing.
    expect((await call("apply", "/api/apply", { method: "POST", body: { source: "timeouts-test", schedules: exported.filter((s) => s.name === "coded") } })).body.unchanged).toEqual(["coded"]);
    const changed = await call("apply", "/api/apply", { method: "POST", body: { source: "timeouts-test", schedules: [{ ...doc.schedules[0], timeoutSeconds: 30 }] } });
    expect(changed.body.changes).toEqual([expect.objectContaining({ name: "coded", fields: ["timeoutSeconds"] })]);
    expect((await q("SELECT timeout_seconds FROM schedules WHERE name = 'coded'"))[0]).toEqual({ timeout_seconds: 30 });
    const bad = await call("apply", "/api/apply", { method: "POST", body: { source: "timeouts-test", schedules: [{ ...doc.schedules[0], timeoutSeconds: -1 }] } });
    expect([bad.status, bad.body.error.field]).toEqual([400, "schedules[0].timeoutSeconds"]);
  });
});
