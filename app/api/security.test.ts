// Hostile and secret-bearing input through the real schedule routes: names refuse markup, other
// strings are stored verbatim (the console renders them as text), unknown fields and oversized
// payloads are refused, and secrets in payloads are masked in answers and in the audit log while
// an edit that sends the mask back keeps the stored secret.
import { beforeAll, describe, expect, it } from "vitest";
import { MASK } from "@/lib/security/mask";
import { setupTestDatabase } from "@/lib/testing/db";

type Ctx = { params: Promise<Record<string, string>> };
type Handler = (req: Request, ctx: Ctx) => Promise<Response>;
const t = setupTestDatabase({ poolSize: 4, routes: true, reset: false });
let create: Handler;
let get: Handler;
let patch: Handler;
let audit: Handler;

const HOSTILE = `<img src=x onerror=alert(1)>`;
const json = (method: string, body: unknown) =>
  new Request("http://localhost/api/schedules", { method, headers: { "content-type": "application/json", origin: "http://localhost" }, body: JSON.stringify(body) });
const named = (name: string): Ctx => ({ params: Promise.resolve({ name }) });

beforeAll(async () => {
  create = (await import("./schedules/route")).POST as Handler;
  const one = await import("./schedules/[name]/route");
  get = one.GET as Handler;
  patch = one.PATCH as Handler;
  audit = (await import("./schedules/[name]/audit/route")).GET as Handler;
});


describe("hostile strings", () => {
  it("refuses markup in a schedule name with a 400 naming the field", async () => {
    const res = await create(json("POST", { name: HOSTILE, handler: "noop", everySeconds: 60 }), named(""));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe("name");
  });

  it("keeps markup in descriptions and payloads verbatim: escaping is the console's job", async () => {
    const res = await create(json("POST", { name: "hostile-text", handler: "noop", everySeconds: 60, description: HOSTILE, payload: { note: HOSTILE } }), named(""));
    expect(res.status).toBe(201);
    const { schedule } = (await res.json()) as { schedule: { description: string; payload: { note: string } } };
    expect(schedule.description).toBe(HOSTILE);
    expect(schedule.payload.note).toBe(HOSTILE);
  });

  it("refuses unknown fields and oversized payloads", async () => {
    const unknown = await create(json("POST", { name: "x1", handler: "noop", everySeconds: 60, isAdmin: true }), named(""));
    expect(unknown.status).toBe(400);
    const big = await create(json("POST", { name: "x2", handler: "noop", everySeconds: 60, payload: { blob: "a".repeat(70_000) } }), named(""));
    expect([400, 413]).toContain(big.status);
    const longName = await create(json("POST", { name: "a".repeat(201), handler: "noop", everySeconds: 60 }), named(""));
    expect(longName.status).toBe(400);
  });
});

describe("secrets in payloads", () => {
  const payload = { url: "https://example.test/hook", method: "POST", headers: { Authorization: "Bearer s3cr3t-value", Accept: "application/json" } };

  it("are masked in every answer and in the audit log, and survive an edit that sends the mask back", async () => {
    const created = await create(json("POST", { name: "hook", handler: "http", everySeconds: 300, payload }), named(""));
    expect(created.status).toBe(201);
    const createdText = await created.text();
    expect(createdText).not.toContain("s3cr3t-value");

    const shown = (await (await get(new Request("http://localhost/api/schedules/hook"), named("hook"))).json()) as { schedule: { payload: typeof payload; version: number } };
    expect(shown.schedule.payload.headers).toEqual({ Authorization: MASK, Accept: "application/json" });

    // The edit form sends the whole (masked) payload back with one change.
    const edited = { ...shown.schedule.payload, url: "https://example.test/other" };
    const res = await patch(json("PATCH", { payload: edited, version: shown.schedule.version }), named("hook"));
    expect(res.status).toBe(200);
    const stored = await t.pool.query<{ payload: typeof payload }>("SELECT payload FROM schedules WHERE name = 'hook'");
    expect(stored.rows[0].payload.headers.Authorization).toBe("Bearer s3cr3t-value");
    expect(stored.rows[0].payload.url).toBe("https://example.test/other");

    // A new secret replaces the old one; the audit says the header changed without saying to what.
    const v = (await (await get(new Request("http://localhost/api/schedules/hook"), named("hook"))).json()) as { schedule: { version: number } };
    const rotate = await patch(json("PATCH", { payload: { ...payload, headers: { Authorization: "Bearer rotated" } }, version: v.schedule.version }), named("hook"));
    expect(rotate.status).toBe(200);
    const log = await t.pool.query<{ text: string }>("SELECT before::text || after::text AS text FROM audit_log");
    expect(log.rows.map((r) => r.text).join()).not.toMatch(/s3cr3t-value|rotated/);
    const entries = (await (await audit(new Request("http://localhost/api/schedules/hook/audit"), named("hook"))).json()) as { entries: { action: string; after: { payload?: unknown } | null }[] };
    expect(entries.entries.map((e) => e.action)).toEqual(["schedule.update", "schedule.update", "schedule.create"]);
    expect(entries.entries[0].after?.payload).toMatchObject({ headers: { Authorization: MASK } });
  });

  it("refuses a mask where no secret is stored", async () => {
    const res = await create(json("POST", { name: "hook2", handler: "http", everySeconds: 300, payload: { url: "https://example.test", headers: { Authorization: MASK } } }), named(""));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe("payload");
  });
});
