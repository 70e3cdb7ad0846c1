// Every route that changes something writes an audit entry naming the person who did it. The routes
// come from the tree (every POST, PATCH, PUT and DELETE exported by an app/api/**/route.ts), so a new
// mutating route without a case here fails the first test. Each case arranges what its route needs,
// calls it as Next does, signed in as a person in credentials mode, and reads audit_log straight
// from the table: at least one new entry of the expected action, by that person.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PEER_HEADER } from "@/lib/auth/client-address";
import { runClockFrom } from "@/lib/testing/clock";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { makeRun, makeSchedule } from "@/lib/testing/factories";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const MODULES = import.meta.glob<Record<string, Handler>>("./**/route.ts");
const ORIGIN = "http://localhost";
const OPERATOR_PASSWORD = "audit-operator-password";
const PERSON = "auditor";
const PERSON_PASSWORD = "auditor-password-1";
/** Signs in and out and changes their password in the cases, which ends their other sessions. */
const SECOND = "second-auditor";

let t: TestDatabase;
let cookie = "";
let peer = 1;

type Call = { params?: Record<string, string>; body?: unknown; query?: string; cookie?: string };
async function call(route: string, method: string, c: Call = {}): Promise<Response> {
  const mod = await MODULES[`./${route}/route.ts`]();
  const url = `${ORIGIN}/api/${route.replace(/\[(\w+)\]/g, (_m, k: string) => encodeURIComponent(c.params?.[k] ?? "x"))}${c.query ?? ""}`;
  const headers: Record<string, string> = { origin: ORIGIN, [PEER_HEADER]: `198.51.100.${peer++}`, cookie: c.cookie ?? cookie };
  if (c.body !== undefined) headers["content-type"] = "application/json";
  return mod[method](new Request(url, { method, headers, body: c.body === undefined ? undefined : JSON.stringify(c.body) }), { params: Promise.resolve(c.params ?? {}) });
}

async function signIn(user: string, password: string): Promise<string> {
  const res = await call("auth/login", "POST", { body: { user, password }, cookie: "" });
  expect(res.status, `sign in as ${user}`).toBe(200);
  return res.headers.get("set-cookie")!.split(";")[0];
}

const one = async <T>(text: string, values: unknown[] = []) => (await t.pool.query(text, values)).rows[0] as T;
const lastAuditId = async () => Number((await one<{ id: string | null }>("SELECT max(id) AS id FROM audit_log")).id ?? 0);

/** One case per mutating route and method: arrange, then the call to make. */
type Case = () => Promise<{ call: Call; action: string; actor?: string }>;
let n = 0;
const fresh = async (over: Parameters<typeof makeSchedule>[1] = {}) => makeSchedule(t.db, { name: `audit-${++n}`, ...over });

const CASES: Record<string, Case> = {
  "schedules POST": async () => ({ call: { body: { name: `audit-new-${++n}`, handler: "noop", everySeconds: 60 } }, action: "schedule.create" }),
  "schedules/[name] PATCH": async () => {
    const s = await fresh();
    return { call: { params: { name: s.name }, body: { description: "changed", version: s.version } }, action: "schedule.update" };
  },
  "schedules/[name] DELETE": async () => ({ call: { params: { name: (await fresh()).name } }, action: "schedule.delete" }),
  "schedules/[name]/pause POST": async () => ({ call: { params: { name: (await fresh()).name }, body: {} }, action: "schedule.pause" }),
  "schedules/[name]/resume POST": async () => ({ call: { params: { name: (await fresh({ enabled: false })).name }, body: {} }, action: "schedule.resume" }),
  "schedules/[name]/run-now POST": async () => ({ call: { params: { name: (await fresh()).name }, body: {} }, action: "schedule.run_now" }),
  "schedules/[name]/backfill POST": async () => ({
    call: { params: { name: (await fresh({ everySeconds: 3600 })).name }, body: { from: "2029-12-31T00:00:00Z", to: "2029-12-31T03:00:00Z" } },
    action: "schedule.backfill",
  }),
  "runs/[id]/requeue POST": async () => ({ call: { params: { id: String((await makeRun(t.db, { scheduleId: (await fresh()).id, state: "dead", attempts: 3 })).id) }, body: {} }, action: "run.requeue" }),
  "runs/requeue POST": async () => ({ call: { body: { ids: [(await makeRun(t.db, { scheduleId: (await fresh()).id, state: "dead", attempts: 3 })).id] } }, action: "run.requeue" }),
  "runs/[id]/cancel POST": async () => ({ call: { params: { id: String((await makeRun(t.db, { scheduleId: (await fresh()).id, state: "pending" })).id) }, body: {} }, action: "run.cancel" }),
  "runs/[id]/discard POST": async () => ({ call: { params: { id: String((await makeRun(t.db, { scheduleId: (await fresh()).id, state: "dead", attempts: 3 })).id) }, body: {} }, action: "run.discard" }),
  "bulk/runs POST": async () => {
    const s = await fresh();
    await makeRun(t.db, { scheduleId: s.id, state: "dead", attempts: 3 });
    return { call: { body: { action: "requeue", filter: { schedule: s.name } } }, action: "run.requeue" };
  },
  "bulk/schedules POST": async () => ({ call: { body: { action: "pause", filter: { search: (await fresh()).name } } }, action: "schedule.pause" }),
  "apply POST": async () => ({ call: { body: { source: "audit.yaml", schedules: [{ name: `audit-file-${++n}`, handler: "noop", everySeconds: 60 }] } }, action: "schedule.create" }),
  "alerts/channels POST": async () => ({ call: { body: { name: `audit-channel-${++n}`, kind: "email", config: { to: ["ops@example.test"] }, enabled: true } }, action: "channel.create" }),
  "alerts/channels/[id] PATCH": async () => ({ call: { params: { id: await channel() }, body: { name: `audit-renamed-${++n}`, kind: "email", config: { to: ["ops@example.test"] }, enabled: false } }, action: "channel.update" }),
  "alerts/channels/[id] DELETE": async () => ({ call: { params: { id: await channel() } }, action: "channel.delete" }),
  "alerts/channels/[id]/test POST": async () => ({ call: { params: { id: await channel() }, body: {} }, action: "channel.test" }),
  "handlers/[name]/limit PUT": async () => ({ call: { params: { name: "noop" }, body: { maxConcurrent: 5 } }, action: "handler.limit" }),
  "people POST": async () => ({ call: { body: { name: `person-${++n}`, role: "viewer", password: "a-long-password-1" } }, action: "person.create" }),
  "people/[name] PATCH": async () => {
    const name = `person-${++n}`;
    expect((await call("people", "POST", { body: { name, role: "viewer", password: "a-long-password-1" } })).status).toBe(201);
    return { call: { params: { name }, body: { role: "operator" } }, action: "person.update" };
  },
  "tokens POST": async () => ({ call: { body: { name: `token-${++n}`, scope: "read" } }, action: "token.create" }),
  "tokens/[id]/revoke POST": async () => {
    const made = (await (await call("tokens", "POST", { body: { name: `token-${++n}`, scope: "read" } })).json()) as { tokenInfo: { id: number } };
    return { call: { params: { id: String(made.tokenInfo.id) }, body: {} }, action: "token.revoke" };
  },
  // Signing in and out are changes too (sessions begin and end); each runs on a session of its own.
  "auth/login POST": async () => ({ call: { body: { user: SECOND, password: PERSON_PASSWORD }, cookie: "" }, action: "auth.login", actor: SECOND }),
  "auth/logout POST": async () => ({ call: { cookie: await signIn(SECOND, PERSON_PASSWORD) }, action: "auth.logout", actor: SECOND }),
  "me/password POST": async () => ({ call: { body: { currentPassword: PERSON_PASSWORD, newPassword: PERSON_PASSWORD }, cookie: await signIn(SECOND, PERSON_PASSWORD) }, action: "person.password", actor: SECOND }),
};

async function channel(): Promise<string> {
  const res = await call("alerts/channels", "POST", { body: { name: `audit-channel-${++n}`, kind: "email", config: { to: ["ops@example.test"] }, enabled: true } });
  expect(res.status).toBe(201);
  return String(((await res.json()) as { channel: { id: number } }).channel.id);
}

/** Every mutating route and method in the tree, read from the route files themselves. */
function mutatingRoutes(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === "route.ts") {
        const route = path.relative(__dirname, dir).split(path.sep).join("/");
        const text = fs.readFileSync(p, "utf8");
        for (const m of text.matchAll(/export (?:const|async function) (POST|PATCH|PUT|DELETE)\b/g)) out.push(`${route} ${m[1]}`);
      }
    }
  };
  walk(__dirname);
  return out.sort();
}

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
  process.env.DATABASE_URL = t.url;
  process.env.SLOTKEEPER_OPERATOR_PASSWORD = OPERATOR_PASSWORD;
  await runClockFrom(t.pool, "2030-01-01T00:00:00Z");
  const op = await signIn("operator", OPERATOR_PASSWORD);
  expect((await call("people", "POST", { body: { name: PERSON, role: "admin", password: PERSON_PASSWORD }, cookie: op })).status).toBe(201);
  expect((await call("people", "POST", { body: { name: SECOND, role: "viewer", password: PERSON_PASSWORD }, cookie: op })).status).toBe(201);
  cookie = await signIn(PERSON, PERSON_PASSWORD);
});

afterAll(async () => {
  delete process.env.SLOTKEEPER_OPERATOR_PASSWORD;
  const { closeDb } = await import("@/lib/server/db");
  await closeDb();
  await t.drop();
});

describe("the audit log", () => {
  it("has a case here for every route that changes something", () => {
    expect(Object.keys(CASES).sort()).toEqual(mutatingRoutes());
  });

  for (const key of Object.keys(CASES).sort()) {
    it(`${key} writes an entry naming the person`, async () => {
      const c = await CASES[key]();
      const before = await lastAuditId();
      const [route, method] = key.split(" ");
      const res = await call(route, method, c.call);
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      const { rows } = await t.pool.query<{ action: string; actor: string; actor_kind: string }>("SELECT action, actor, actor_kind FROM audit_log WHERE id > $1 ORDER BY id", [before]);
      expect(rows.map((r) => r.action)).toContain(c.action);
      expect(rows.find((r) => r.action === c.action)).toMatchObject({ actor: c.actor ?? PERSON, actor_kind: "user" });
    });
  }
});
