// A `command` schedule's payload is checked when it is saved, through the route handlers against a
// real database: a payload the handler could never run is a 400 naming the field, and saves nothing.
import { beforeAll, describe, expect, it } from "vitest";
import { setupTestDatabase } from "@/lib/testing/db";

// The tests share what the file wrote (reset: false): the second edits what it creates.
const t = setupTestDatabase({ routes: true, reset: false });
type Handler = (req: Request, ctx: { params: Promise<{ name: string }> }) => Promise<Response>;
let POST: Handler;
let PATCH: Handler;

beforeAll(async () => {
  POST = (await import("./route")).POST as unknown as Handler;
  PATCH = (await import("./[name]/route")).PATCH as unknown as Handler;
});

async function call(handler: Handler, path: string, body: unknown, name = "") {
  const req = new Request(`http://127.0.0.1${path}`, { method: handler === POST ? "POST" : "PATCH", headers: { "content-type": "application/json", origin: "http://127.0.0.1" }, body: JSON.stringify(body) });
  const res = await handler(req, { params: Promise.resolve({ name }) });
  return { status: res.status, body: await res.json() };
}

const counts = async () => (await t.pool.query("SELECT (SELECT count(*) FROM schedules)::int AS s, (SELECT count(*) FROM audit_log)::int AS a")).rows[0];
const create = (payload: unknown, name = "backup") => call(POST, "/api/schedules", { name, handler: "command", everySeconds: 3600, ...(payload === undefined ? {} : { payload }) });

describe("command payloads at the API", () => {
  it("refuses each bad field with a 400 naming it, saving nothing", async () => {
    const before = await counts();
    const cases: [unknown, string][] = [
      [undefined, "payload.command"],
      [{ command: "" }, "payload.command"],
      [{ command: "/usr/bin/backup", args: "--full" }, "payload.args"],
      [{ command: "/usr/bin/backup", args: ["--full", 2] }, "payload.args.1"],
      [{ command: "/usr/bin/backup", timeoutSeconds: 0 }, "payload.timeoutSeconds"],
      [{ command: "/usr/bin/backup", timeoutSeconds: "60" }, "payload.timeoutSeconds"],
      [{ command: "/usr/bin/backup", timeoutSeconds: 1.5 }, "payload.timeoutSeconds"],
      [{ command: "/usr/bin/backup", nonRetryableExitCodes: [2, 0] }, "payload.nonRetryableExitCodes.1"],
      [{ command: "/usr/bin/backup", nonRetryableExitCodes: 2 }, "payload.nonRetryableExitCodes"],
      [{ command: "/usr/bin/backup", env: ["A=1"] }, "payload.env"],
      [{ command: "/usr/bin/backup", env: { TARGET: 5 } }, "payload.env.TARGET"],
      [{ command: "/usr/bin/backup", env: { SLOTKEEPER_SLOT: "x" } }, "payload.env.SLOTKEEPER_SLOT"],
      [{ command: "/usr/bin/backup", cwd: "relative/dir" }, "payload.cwd"],
      [{ command: "/usr/bin/backup", shell: "yes" }, "payload.shell"],
      [{ command: "/usr/bin/backup", killGraceSeconds: -1 }, "payload.killGraceSeconds"],
      [{ command: "/usr/bin/backup", shel: true }, "payload.shel"],
    ];
    for (const [payload, field] of cases) {
      const r = await create(payload);
      expect([r.status, r.body.error?.code, r.body.error?.field], JSON.stringify(payload)).toEqual([400, "validation", field]);
      expect(r.body.error.message).toContain(field);
    }
    expect(await counts()).toEqual(before);
  });

  it("saves a valid one, env references included; an edit that breaks it is refused and changes nothing", async () => {
    const payload = { command: "/usr/bin/backup", args: ["--full", { $env: "BACKUP_TARGET" }], env: { TOKEN: { $env: "BACKUP_TOKEN" }, MODE: "full" }, cwd: "/srv", timeoutSeconds: 600, nonRetryableExitCodes: [2], shell: false, killGraceSeconds: 5 };
    const ok = await create(payload);
    expect(ok.status).toBe(201);
    expect(ok.body.schedule.payload).toEqual(payload);
    const before = await counts();
    // The payload alone, against the stored handler.
    const bad = await call(PATCH, "/api/schedules/backup", { version: 1, payload: { command: "/usr/bin/backup", args: [1] } }, "backup");
    expect([bad.status, bad.body.error.field]).toEqual([400, "payload.args.0"]);
    // The handler alone, against the stored payload.
    const noop = await create({ message: "hi" }, "was-noop");
    const other = await call(POST, "/api/schedules", { name: "plain", handler: "noop", everySeconds: 60, payload: { anything: 1 } });
    expect([noop.status, other.status]).toEqual([400, 201]);
    const switched = await call(PATCH, "/api/schedules/plain", { version: 1, handler: "command" }, "plain");
    expect([switched.status, switched.body.error.field]).toEqual([400, "payload.command"]);
    const stored = (await t.pool.query("SELECT name, handler, payload, version FROM schedules WHERE name IN ('backup', 'plain') ORDER BY name")).rows;
    expect(stored).toEqual([
      { name: "backup", handler: "command", payload, version: 1 },
      { name: "plain", handler: "noop", payload: { anything: 1 }, version: 1 },
    ]);
    expect((await counts()).a).toBe(before.a + 1); // only the create of "plain"
    // A good edit of both goes through.
    const fixed = await call(PATCH, "/api/schedules/plain", { version: 1, handler: "command", payload: { command: "/bin/true" } }, "plain");
    expect(fixed.status).toBe(200);
  });
});
