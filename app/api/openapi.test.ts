// GET /api/openapi.json against the routes it describes: every route file and exported method is in
// the document and nothing else is; the document is valid OpenAPI 3.1 (the specification's own
// schema, @seriousme/openapi-schema-validator); and real answers of real routes, called as Next
// calls them against a test database, match the document's schema for their route and status
// (ajv, JSON Schema 2020-12), answer objects being closed so an undocumented field fails.
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PEER_HEADER } from "@/lib/auth/client-address";
import { registerWorker } from "@/lib/workers/registry";
import { setClock } from "@/lib/testing/clock";
import { setupTestDatabase } from "@/lib/testing/db";
import { makeAttempt, makeRun, makeSchedule } from "@/lib/testing/factories";

const MODULES = import.meta.glob<Record<string, unknown>>("./**/route.ts", { eager: true });
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

type Json = Record<string, unknown>;
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** `./schedules/[name]/runs/route.ts` → `/api/schedules/{name}/runs`. */
const pathOf = (key: string) => `/api/${key.slice(2, -"/route.ts".length)}`.replace(/\[(\w+)\]/g, "{$1}");
const moduleOf = (path: string) => MODULES[`./${path.slice("/api/".length).replace(/\{(\w+)\}/g, "[$1]")}/route.ts`];

const t = setupTestDatabase({ poolSize: 4, routes: true, reset: false });
let doc: Json;
let ajv: Ajv2020;

async function call(method: string, path: string, opts: { params?: Record<string, string>; query?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const params = opts.params ?? {};
  const url = path.replace(/\{(\w+)\}/g, (_m, k: string) => encodeURIComponent(params[k]));
  const headers: Record<string, string> = { [PEER_HEADER]: "127.0.0.1", origin: "http://localhost:3000", ...opts.headers };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const handler = moduleOf(path)[method] as Handler;
  const res = await handler(new Request(`http://localhost:3000${url}${opts.query ?? ""}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) }), {
    params: Promise.resolve(params),
  });
  const text = await res.text();
  const json = res.headers.get("content-type")?.includes("json") ?? false;
  return { status: res.status, body: (text && json ? JSON.parse(text) : undefined) as Json, text, headers: res.headers, contentType: res.headers.get("content-type") };
}

/** A JSON pointer segment inside a URI fragment. */
const segment = (s: string) => encodeURIComponent(s.replace(/~/g, "~0").replace(/\//g, "~1"));

/**
 * The schema the document gives for this route, method and status (following a shared error
 * response), or null when the document says that answer has no body (204).
 */
function answerSchemaRef(method: string, path: string, status: number): string | null {
  const op = ((doc.paths as Json)[path] as Json | undefined)?.[method.toLowerCase()] as Json | undefined;
  expect(op, `${method} ${path} is in the document`).toBeDefined();
  let response = (op!.responses as Json)[String(status)] as Json | undefined;
  expect(response, `${method} ${path} documents status ${status}`).toBeDefined();
  let pointer = `#/paths/${segment(path)}/${method.toLowerCase()}/responses/${status}`;
  if (typeof response!.$ref === "string") {
    pointer = response!.$ref;
    response = ((doc.components as Json).responses as Json)[pointer.split("/").pop()!] as Json;
  }
  if (response!.content === undefined) return null;
  expect(response!.content, `${method} ${path} ${status} has a JSON body`).toHaveProperty(["application/json", "schema"]);
  return `openapi${pointer}/content/${segment("application/json")}/schema`;
}

/**
 * Call a route for real and check its answer against the document: the status expected, the body
 * valid, or no body at all where the document gives that status none.
 */
async function expectDocumented(method: string, path: string, status: number, opts: Parameters<typeof call>[2] = {}): Promise<Json> {
  const r = await call(method, path, opts);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
  const ref = answerSchemaRef(method, path, status);
  if (ref === null) {
    expect(r.text, `${method} ${path} ${status} answers no body, as documented`).toBe("");
    return {};
  }
  const validate = ajv.getSchema(ref)!;
  expect(validate, "the schema compiles").toBeTypeOf("function");
  const valid = validate(r.body);
  expect(validate.errors ?? [], `${method} ${path} ${status} answer matches the document`).toEqual([]);
  expect(valid).toBe(true);
  return r.body;
}

beforeAll(async () => {
  const r = await call("GET", "/api/openapi.json");
  expect(r.status).toBe(200);
  doc = r.body;
  ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(doc, "openapi");
});

describe("the OpenAPI document", () => {
  it("lists exactly the routes under app/api and the methods each exports", () => {
    const actual = Object.keys(MODULES)
      .flatMap((key) => METHODS.filter((m) => typeof MODULES[key][m] === "function").map((m) => `${m} ${pathOf(key)}`))
      .sort();
    const documented = Object.entries(doc.paths as Record<string, Json>)
      .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(actual.length).toBeGreaterThan(40);
    expect(documented).toEqual(actual);
  });

  it("is valid OpenAPI 3.1 by the specification's schema", async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it("documents the one error shape for every guarded operation, and closes answer objects", () => {
    const error = (doc.components as { schemas: Record<string, Json> }).schemas.Error;
    expect(error).toMatchObject({ type: "object", required: ["error"], additionalProperties: false });
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Json; security?: unknown[] }>>)) {
      for (const [method, op] of Object.entries(item)) {
        const statuses = Object.keys(op.responses);
        if (op.security === undefined) expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(["400", "401", "403", "500"]));
        if (path.includes("{")) expect(statuses, `${method} ${path}`).toContain(op.security === undefined ? "404" : "500");
        for (const s of statuses.filter((x) => Number(x) >= 400 && !(path === "/api/health" && x === "503"))) expect(op.responses[s]).toEqual({ $ref: `#/components/responses/Error${s}` });
        for (const s of statuses.filter((x) => Number(x) < 300)) {
          const schema = ((op.responses[s] as Json).content as Record<string, { schema: Json }> | undefined)?.["application/json"]?.schema;
          // Every JSON answer is a closed object (or a choice of closed objects), except the document itself.
          if (schema && path !== "/api/openapi.json") {
            const shapes = (schema.anyOf as Json[] | undefined) ?? [schema];
            for (const shape of shapes) expect(shape.additionalProperties, `${method} ${path} ${s}`).toBe(false);
          }
        }
      }
    }
  });
});

describe("real answers match the document", () => {
  let name = "";
  let runId = 0;

  beforeAll(async () => {
    await setClock(t.pool, new Date("2030-01-01T10:00:00Z"));
    await registerWorker(t.db, { id: "w-openapi", concurrency: 4, handlers: [{ name: "noop", idempotent: true, description: "does nothing" }], version: "test", commands: ["echo"] });
  });

  it("schedules: create (201), list, get, edit, run now, their runs; 400, 404 and 409 as the one error shape", async () => {
    const created = await expectDocumented("POST", "/api/schedules", 201, {
      body: { name: "openapi-report", handler: "noop", cron: "*/5 * * * *", payload: { url: "https://example.test", token: "secret" }, tags: ["docs"], owner: "team" },
    });
    name = ((created.schedule as Json).name as string) ?? "";
    expect(name).toBe("openapi-report");
    await expectDocumented("POST", "/api/schedules", 409, { body: { name, handler: "noop", everySeconds: 60 } });
    const bad = await expectDocumented("POST", "/api/schedules", 400, { body: { name: "x", handler: "noop", cron: "61 * * * *" } });
    expect((bad.error as Json).field).toBe("cron");
    const list = await expectDocumented("GET", "/api/schedules", 200, { query: "?limit=10" });
    expect((list.schedules as Json[]).map((s) => s.name)).toContain(name);
    const one = await expectDocumented("GET", "/api/schedules/{name}", 200, { params: { name } });
    expect((one.schedule as Json).status).toBeDefined();
    await expectDocumented("GET", "/api/schedules/{name}", 404, { params: { name: "no-such-schedule" } });
    await expectDocumented("PATCH", "/api/schedules/{name}", 200, { params: { name }, body: { description: "edited", version: 1 } });
    await expectDocumented("PATCH", "/api/schedules/{name}", 409, { params: { name }, body: { description: "stale", version: 1 } });
    const manual = await expectDocumented("POST", "/api/schedules/{name}/run-now", 200, { params: { name } });
    runId = (manual.run as Json).id as number;
    await expectDocumented("POST", "/api/schedules/{name}/backfill", 200, { params: { name }, body: { from: "2030-01-01T09:00:00Z", to: "2030-01-01T09:30:00Z", dryRun: true } });
    await expectDocumented("POST", "/api/schedules/{name}/pause", 200, { params: { name }, body: { note: "docs" } });
    await expectDocumented("POST", "/api/schedules/{name}/resume", 200, { params: { name } });
    const runs = await expectDocumented("GET", "/api/schedules/{name}/runs", 200, { params: { name } });
    expect((runs.runs as Json[]).map((r) => r.id)).toContain(runId);
    await expectDocumented("GET", "/api/schedules/{name}/audit", 200, { params: { name } });
  });

  it("runs: list, one with attempts and their output, re-queue, cancel, discard", async () => {
    const s = await makeSchedule(t.db, { name: "openapi-dead" });
    const dead = await makeRun(t.db, { scheduleId: s.id, state: "dead", attempts: 2 });
    await makeAttempt(t.db, { runId: dead.id, attempt: 1, workerId: "w-openapi", outcome: "failed", error: "boom" });
    await makeAttempt(t.db, { runId: dead.id, attempt: 2, workerId: "w-openapi", outcome: "failed", error: "boom again" });
    await t.pool.query(`INSERT INTO attempt_output (run_id, attempt, result, log, stdout, stderr) VALUES ($1, 2, '{"rows": 3}', '[{"time": "2030-01-01T10:00:00.000Z", "level": "info", "msg": "hi", "n": 1}]', 'out', NULL)`, [dead.id]);
    const all = await expectDocumented("GET", "/api/runs", 200, { query: "?state=dead,pending&limit=50" });
    expect((all.runs as Json[]).map((r) => r.id)).toEqual(expect.arrayContaining([dead.id, runId]));
    const detail = await expectDocumented("GET", "/api/runs/{id}", 200, { params: { id: String(dead.id) } });
    expect(((detail.run as Json).attemptsList as Json[]).map((a) => a.output === null)).toEqual([true, false]);
    await expectDocumented("GET", "/api/runs/{id}", 404, { params: { id: "999999" } });
    await expectDocumented("GET", "/api/runs/{id}", 400, { params: { id: "abc" } });
    await expectDocumented("POST", "/api/runs/{id}/requeue", 409, { params: { id: String(runId) } });
    await expectDocumented("POST", "/api/runs/{id}/cancel", 200, { params: { id: String(runId) }, body: { reason: "docs" } });
    const dead2 = await makeRun(t.db, { scheduleId: s.id, state: "dead", attempts: 6, scheduledFor: new Date("2030-01-01T09:00:00Z") });
    await expectDocumented("POST", "/api/runs/{id}/discard", 200, { params: { id: String(dead2.id) } });
    await expectDocumented("POST", "/api/runs/{id}/requeue", 200, { params: { id: String(dead.id) } });
    await expectDocumented("POST", "/api/runs/requeue", 200, { body: { ids: [dead.id, 999999] } });
  });

  it("workers, overview, handlers, health, charts, preview, export, audit, alerts, me", async () => {
    const w = await expectDocumented("GET", "/api/workers", 200);
    expect((w.workers as Json[]).map((x) => x.id)).toContain("w-openapi");
    const o = await expectDocumented("GET", "/api/overview", 200);
    expect((o.worstSinceLastSuccess as Json[]).length).toBeGreaterThan(0);
    await expectDocumented("GET", "/api/handlers", 200);
    await expectDocumented("GET", "/api/health", 200);
    await expectDocumented("GET", "/api/charts", 200, { query: "?window=1h" });
    await expectDocumented("GET", "/api/charts", 400, { query: "?window=2y" });
    await expectDocumented("GET", "/api/timing/preview", 200, { query: "?cron=0%202%20*%20*%20*&timezone=Europe/London" });
    await expectDocumented("GET", "/api/timing/preview", 200, { query: "?cron=61%20*%20*%20*%20*" });
    await expectDocumented("GET", "/api/export", 200);
    await expectDocumented("GET", "/api/audit", 200, { query: "?limit=5" });
    await expectDocumented("GET", "/api/alerts", 200);
    await expectDocumented("GET", "/api/alerts/events", 200);
    await expectDocumented("GET", "/api/me", 200);
    await expectDocumented("POST", "/api/apply", 200, { body: { source: "docs", dryRun: true, document: "schedules:\n  - name: from-file\n    handler: noop\n    everySeconds: 60\n" } });
  });

  it("channels, tokens and people; 401 for an unknown token and 403 for a viewer's change", async () => {
    const ch = await expectDocumented("POST", "/api/alerts/channels", 201, { body: { name: "ops", kind: "webhook", config: { url: "http://127.0.0.1:9/" } } });
    const id = String((ch.channel as Json).id);
    await expectDocumented("GET", "/api/alerts/channels", 200);
    await expectDocumented("GET", "/api/alerts/channels/{id}", 200, { params: { id } });
    await expectDocumented("PATCH", "/api/alerts/channels/{id}", 200, { params: { id }, body: { name: "ops", kind: "email", config: { to: ["ops@example.test"] } } });
    const made = await expectDocumented("POST", "/api/tokens", 201, { body: { name: "docs-viewer", scope: "read" } });
    await expectDocumented("GET", "/api/tokens", 200);
    await expectDocumented("GET", "/api/people", 200);
    const viewer = { authorization: `Bearer ${made.token as string}` };
    await expectDocumented("POST", "/api/schedules/{name}/run-now", 403, { params: { name }, headers: viewer });
    await expectDocumented("GET", "/api/schedules", 401, { headers: { authorization: "Bearer skt_not-a-token" } });
    await expectDocumented("POST", "/api/tokens/{id}/revoke", 200, { params: { id: String(((made.tokenInfo as Json).id as number) ?? 0) } });
  });

  it("bulk actions, a schedule's delete, a handler's limit, a channel's test send and delete, people added and changed", async () => {
    for (const n of ["openapi-bulk-a", "openapi-bulk-b"]) await makeSchedule(t.db, { name: n, tags: ["bulk-docs"], owner: "docs-team" });
    const counted = await expectDocumented("POST", "/api/bulk/schedules", 200, { body: { action: "pause", filter: { tag: "bulk-docs" }, note: "docs", dryRun: true } });
    expect(counted).toMatchObject({ matched: 2, changed: ["openapi-bulk-a", "openapi-bulk-b"] });
    await expectDocumented("POST", "/api/bulk/schedules", 200, { body: { action: "pause", filter: { tag: "bulk-docs", owner: "docs-team" }, note: "docs" } });
    expect((await t.pool.query("SELECT name FROM schedules WHERE 'bulk-docs' = ANY(tags) AND NOT enabled AND paused_note = 'docs' ORDER BY name")).rows).toEqual([{ name: "openapi-bulk-a" }, { name: "openapi-bulk-b" }]);
    const badFilter = await expectDocumented("POST", "/api/bulk/schedules", 400, { body: { action: "pause", filter: { status: "sleepy" } } });
    expect((badFilter.error as Json).field).toBe("filter.status");

    const s = await makeSchedule(t.db, { name: "openapi-bulk-runs" });
    const deadIds = await Promise.all([1, 2].map(async (h) => (await makeRun(t.db, { scheduleId: s.id, state: "dead", attempts: 3, scheduledFor: new Date(Date.UTC(2030, 0, 1, h)) })).id));
    expect(await expectDocumented("POST", "/api/bulk/runs", 200, { body: { action: "requeue", filter: { schedule: s.name }, dryRun: true } })).toMatchObject({ matched: 2 });
    await expectDocumented("POST", "/api/bulk/runs", 200, { body: { action: "discard", filter: { schedule: s.name }, reason: "docs" } });
    expect((await t.pool.query("SELECT state::text AS state FROM runs WHERE id = ANY($1)", [deadIds])).rows).toEqual([{ state: "skipped" }, { state: "skipped" }]);
    await expectDocumented("POST", "/api/bulk/runs", 400, { body: { action: "requeue", filter: { from: "yesterday" } } });

    const deleted = await expectDocumented("DELETE", "/api/schedules/{name}", 200, { params: { name: "openapi-bulk-b" }, query: "?history=keep" });
    expect(deleted).toEqual({ deleted: "openapi-bulk-b", history: "kept" });
    await expectDocumented("DELETE", "/api/schedules/{name}", 404, { params: { name: "openapi-bulk-b" } });

    expect(await expectDocumented("PUT", "/api/handlers/{name}/limit", 200, { params: { name: "noop" }, body: { maxConcurrent: 3 } })).toEqual({ handler: "noop", maxConcurrent: 3 });
    await expectDocumented("PUT", "/api/handlers/{name}/limit", 200, { params: { name: "noop" }, body: { maxConcurrent: null } });
    await expectDocumented("PUT", "/api/handlers/{name}/limit", 400, { params: { name: "noop" }, body: { maxConcurrent: -1 } });

    const ch = await expectDocumented("POST", "/api/alerts/channels", 201, { body: { name: "docs-test-send", kind: "webhook", config: { url: "http://127.0.0.1:9/" } } });
    const id = String((ch.channel as Json).id);
    const sent = await expectDocumented("POST", "/api/alerts/channels/{id}/test", 200, { params: { id } });
    expect(sent.ok).toBe(false); // nothing listens on port 9
    await expectDocumented("DELETE", "/api/alerts/channels/{id}", 204, { params: { id } });
    await expectDocumented("DELETE", "/api/alerts/channels/{id}", 404, { params: { id } });
    await expectDocumented("POST", "/api/alerts/channels/{id}/test", 404, { params: { id } });

    const added = await expectDocumented("POST", "/api/people", 201, { body: { name: "docs-person", displayName: "Docs Person", role: "operator", password: "docs-person-password" } });
    expect((added.person as Json).name).toBe("docs-person");
    await expectDocumented("POST", "/api/people", 409, { body: { name: "docs-person", role: "viewer", password: "another-long-password" } });
    await expectDocumented("POST", "/api/people", 400, { body: { name: "docs-short", role: "viewer", password: "short" } });
    await expectDocumented("PATCH", "/api/people/{name}", 200, { params: { name: "docs-person" }, body: { displayName: "Docs P." } });
    await expectDocumented("PATCH", "/api/people/{name}", 404, { params: { name: "nobody-by-this-name" }, body: { disabled: true } });
  });

  describe("signing in, with passwords configured", () => {
    beforeAll(() => {
      process.env.SLOTKEEPER_OPERATOR_PASSWORD = "openapi-operator-password";
    });
    afterAll(() => {
      delete process.env.SLOTKEEPER_OPERATOR_PASSWORD;
    });

    it("answers 200, then 401 for a wrong password and 429 once an address has guessed too often", async () => {
      const from = { [PEER_HEADER]: "198.51.100.77" };
      await expectDocumented("POST", "/api/auth/login", 200, { body: { user: "operator", password: "openapi-operator-password" }, headers: { [PEER_HEADER]: "198.51.100.78" } });
      // Five wrong guesses from one address (lib/auth/throttle.ts), then it waits.
      for (let i = 0; i < 5; i++) await expectDocumented("POST", "/api/auth/login", 401, { body: { user: "operator", password: `guess-${i}` }, headers: from });
      await expectDocumented("POST", "/api/auth/login", 429, { body: { user: "operator", password: "guess-final" }, headers: from });
    });

    it("a person changes their own password: 204 with no body, 400 for a wrong current password", async () => {
      const signIn = await call("POST", "/api/auth/login", { body: { user: "docs-person", password: "docs-person-password" }, headers: { [PEER_HEADER]: "198.51.100.79" } });
      expect(signIn.status, JSON.stringify(signIn.body)).toBe(200);
      const cookie = { cookie: signIn.headers.get("set-cookie")!.split(";")[0], [PEER_HEADER]: "198.51.100.79" };
      await expectDocumented("POST", "/api/me/password", 400, { body: { currentPassword: "not-the-password", newPassword: "docs-person-new-password" }, headers: cookie });
      await expectDocumented("POST", "/api/me/password", 204, { body: { currentPassword: "docs-person-password", newPassword: "docs-person-new-password" }, headers: cookie });
      const again = await call("POST", "/api/auth/login", { body: { user: "docs-person", password: "docs-person-new-password" }, headers: { [PEER_HEADER]: "198.51.100.79" } });
      expect(again.status).toBe(200);
    });
  });
});

// The query parameters the document gives each operation against those its route reads. The routes
// read them through URLSearchParams; a spy on its prototype records which names one call reads.
// A route that reads only every parameter at once (entries, a zod parse of all of them) is checked
// the other way round: each documented name, given an invalid value, must be refused naming it
// or accepted (free text).
describe("documented query parameters are the ones the routes read", () => {
  type Reads = { names: Set<string>; all: boolean };
  const proto = URLSearchParams.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const NAMED = ["get", "getAll", "has"] as const;
  const WHOLE = ["entries", "keys", "values", "forEach", Symbol.iterator as unknown as string] as const;

  async function readsOf(method: string, path: string, opts: Parameters<typeof call>[2]): Promise<Reads> {
    const reads: Reads = { names: new Set(), all: false };
    const saved = new Map<string, (...a: unknown[]) => unknown>();
    for (const m of [...NAMED, ...WHOLE]) saved.set(m, proto[m]);
    for (const m of NAMED)
      proto[m] = function (this: URLSearchParams, ...a: unknown[]) {
        reads.names.add(String(a[0]));
        return saved.get(m)!.apply(this, a);
      };
    for (const m of WHOLE)
      proto[m] = function (this: URLSearchParams, ...a: unknown[]) {
        reads.all = true;
        return saved.get(m)!.apply(this, a);
      };
    try {
      await call(method, path, opts);
    } finally {
      for (const [m, f] of saved) proto[m] = f;
    }
    return reads;
  }

  const documented = (path: string, method: string) =>
    ((((doc.paths as Json)[path] as Json)[method] as Json).parameters as { in: string; name: string }[] | undefined)?.filter((p) => p.in === "query").map((p) => p.name) ?? [];

  let probe = "";
  let runId = "";
  beforeAll(async () => {
    const s = await makeSchedule(t.db, { name: "openapi-query-probe" });
    probe = s.name;
    runId = String((await makeRun(t.db, { scheduleId: s.id, state: "dead", attempts: 1 })).id);
  });

  it("every GET reads exactly the parameters the document lists", async () => {
    const gets = Object.entries(doc.paths as Record<string, Json>).filter(([, item]) => "get" in item);
    expect(gets.length).toBeGreaterThan(20);
    const wrong: string[] = [];
    for (const [path] of gets) {
      // The sign-in pages answer with a redirect before reading anything when single sign-on is off; src: lib/auth/oidc-settings.ts.
      if (path.startsWith("/api/auth/oidc/")) continue;
      const params = { name: probe, id: runId };
      const reads = await readsOf("GET", path, { params });
      const listed = documented(path, "get");
      if (reads.all && reads.names.size === 0) {
        for (const q of listed) {
          const r = await call("GET", path, { params, query: `?${q}=not-a-valid-value` });
          // A free-text parameter accepts anything; an invalid value of any other must be refused naming it.
          if (r.status === 400 && ((r.body.error as Json)?.field as string | undefined) !== q) wrong.push(`GET ${path}: a bad ${q} is refused naming ${String((r.body.error as Json)?.field)}`);
        }
        continue;
      }
      const read = [...reads.names].sort();
      if (JSON.stringify(read) !== JSON.stringify([...listed].sort())) wrong.push(`GET ${path}: reads [${read.join(", ")}], documents [${[...listed].sort().join(", ")}]`);
    }
    expect(wrong).toEqual([]);
  });
});
