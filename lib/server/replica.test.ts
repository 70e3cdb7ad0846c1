// Reads from a real streaming standby. This file starts its own primary and an asynchronous
// standby of it (lib/testing/standby.ts), points the web process's DATABASE_URL and
// DATABASE_READ_URL at them, and calls the route handlers as Next does. What proves which server
// answered is outside the code: with WAL replay paused on the standby (pg_wal_replay_pause), the
// standby still holds the old value, read there directly, while the primary holds the new one; and
// with the standby stopped, an answer can only have come from the primary.
//
// Replication lag is wall time (the age of what the standby has not replayed), so the lag checks
// wait on real time, polling, a few seconds at most.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateAlerts } from "@/lib/alerts/evaluate";
import { healthAnswerSchema } from "@/lib/api/answers";
import { PEER_HEADER } from "@/lib/auth/client-address";
import { replicaNotice } from "@/components/replica-banner";
import { createDb } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";
import { readStatusCounts } from "@/lib/health/status-counts";
import { startCluster, startStandby, type Cluster, type Standby } from "@/lib/testing/standby";
import { closeDb } from "./db";
import { READ_FALLBACK_HEADER, READ_FROM_HEADER, REPLICA_LAG_HEADER, WROTE_COOKIE, type ReplicaStatus } from "./replica";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const ORIGIN = "http://localhost:3000";
const APP_NAME = "sk_replica_test";

let primary: Cluster;
let standby: Standby;
let onPrimary: pg.Pool;
let onStandby: pg.Pool;
const saved = { url: process.env.DATABASE_URL, read: process.env.DATABASE_READ_URL, warn: process.env.SLOTKEEPER_REPLICA_LAG_WARN_SECONDS };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await get().catch(() => undefined);
    if (v !== undefined && ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(v)})`);
    await sleep(100);
  }
}

async function call(mod: Record<string, Handler>, method: string, path: string, opts: { params?: Record<string, string>; body?: unknown; cookie?: string } = {}) {
  const headers: Record<string, string> = { [PEER_HEADER]: "127.0.0.1" };
  if (opts.cookie) headers.cookie = opts.cookie;
  if (method !== "GET") headers.origin = ORIGIN;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  return mod[method](new Request(`${ORIGIN}/api/${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) }), { params: Promise.resolve(opts.params ?? {}) });
}

const routes = {
  schedules: () => import("@/app/api/schedules/route") as Promise<unknown> as Promise<Record<string, Handler>>,
  schedule: () => import("@/app/api/schedules/[name]/route") as Promise<unknown> as Promise<Record<string, Handler>>,
  pause: () => import("@/app/api/schedules/[name]/pause/route") as Promise<unknown> as Promise<Record<string, Handler>>,
  metrics: () => import("@/app/api/metrics/route") as Promise<unknown> as Promise<Record<string, Handler>>,
  overview: () => import("@/app/api/overview/route") as Promise<unknown> as Promise<Record<string, Handler>>,
  health: () => import("@/app/api/health/route") as Promise<unknown> as Promise<Record<string, Handler>>,
};

async function getSchedule(name: string, cookie?: string) {
  const res = await call(await routes.schedule(), "GET", `schedules/${name}`, { params: { name }, cookie });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { schedule: { description: string | null; version: number; enabled: boolean } };
  return { res, schedule: body.schedule };
}

async function health(): Promise<{ ok: boolean; replica: ReplicaStatus }> {
  const res = await (await routes.health()).GET(new Request(`${ORIGIN}/api/health`), { params: Promise.resolve({}) });
  return (await res.json()) as { ok: boolean; replica: ReplicaStatus };
}

/** The status counts of the last alert pass, read on one server. */
const countsOn = (pool: pg.Pool) => readStatusCounts(createDb(pool));
const statusAsOf = (pool: pg.Pool) => async () => (await countsOn(pool)).asOf?.getTime() ?? 0;
const pausedOn = async (pool: pg.Pool) => (await countsOn(pool)).byStatusHandler.find((e) => e.status === "paused")?.count ?? 0;
const descriptionOn = async (pool: pg.Pool, name: string) => (await pool.query<{ description: string | null }>("SELECT description FROM schedules WHERE name = $1", [name])).rows[0]?.description;

beforeAll(async () => {
  primary = await startCluster({ fromPort: 59432, database: "slotkeeper" });
  await migrateDatabase(primary.url);
  standby = await startStandby(primary, { appName: APP_NAME, synchronous: false, fromPort: 59532 });
  onPrimary = new pg.Pool({ connectionString: primary.url, max: 2 });
  onStandby = new pg.Pool({ connectionString: standby.url, max: 2 });
  onStandby.on("error", () => {});
  process.env.DATABASE_URL = primary.url;
  process.env.DATABASE_READ_URL = standby.url;
  process.env.SLOTKEEPER_REPLICA_LAG_WARN_SECONDS = "1";
}, 180_000);

afterAll(async () => {
  await closeDb();
  await onPrimary?.end();
  await onStandby?.end().catch(() => {});
  await standby?.stop();
  await primary?.stop();
  for (const [k, v] of [["DATABASE_URL", saved.url], ["DATABASE_READ_URL", saved.read], ["SLOTKEEPER_REPLICA_LAG_WARN_SECONDS", saved.warn]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe("reads from a streaming standby", () => {
  it("serves reads from the standby and writes on the primary; with replay paused the console shows the old value and the lag", async () => {
    const created = await call(await routes.schedules(), "POST", "schedules", { body: { name: "replica-1", handler: "noop", everySeconds: 60, description: "first" } });
    expect(created.status).toBe(201);
    await until("the standby replays the new schedule", () => descriptionOn(onStandby, "replica-1"), (d) => d === "first");
    // The metrics' status counts are what the last alert pass (a worker's, on the primary) judged.
    const alertPass = () => evaluateAlerts(createDb(onPrimary), { publicUrl: ORIGIN, reminderSeconds: 0 });
    await alertPass();
    await until("the standby replays the alert pass", statusAsOf(onStandby), (t) => t > 0);

    const first = await getSchedule("replica-1");
    expect(first.res.headers.get(READ_FROM_HEADER)).toBe("replica");
    expect(first.schedule.description).toBe("first");
    // The standby's own view of who is connected: the web process's read pool.
    const sessions = await onStandby.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'slotkeeper:web:read'");
    expect(sessions.rows[0].n).toBeGreaterThan(0);
    expect((await health()).replica).toMatchObject({ configured: true, readsFrom: "replica", state: "streaming" });

    await onStandby.query("SELECT pg_wal_replay_pause()");
    await until("replay paused", async () => (await onStandby.query("SELECT pg_get_wal_replay_pause_state() AS s")).rows[0].s as string, (s) => s === "paused");

    // A write goes to the primary, and its answer reads there too (its own write).
    const patched = await call(await routes.schedule(), "PATCH", "schedules/replica-1", { params: { name: "replica-1" }, body: { description: "second", version: first.schedule.version } });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { schedule: { description: string } }).schedule.description).toBe("second");
    expect(patched.headers.get(READ_FROM_HEADER)).toBeNull();
    const wrote = patched.headers.get("set-cookie")?.split(";")[0] ?? "";
    expect(wrote).toMatch(new RegExp(`^${WROTE_COOKIE}=[0-9A-F]+/[0-9A-F]+$`));
    const paused = await call(await routes.pause(), "POST", "schedules/replica-1/pause", { params: { name: "replica-1" }, body: {} });
    expect(paused.status).toBe(200);
    expect(await descriptionOn(onPrimary, "replica-1")).toBe("second");
    expect(await descriptionOn(onStandby, "replica-1")).toBe("first");
    await alertPass();

    // The console's reads show the standby's (old) data...
    const stale = await getSchedule("replica-1");
    expect(stale.schedule).toMatchObject({ description: "first", enabled: true });
    expect(stale.res.headers.get(READ_FROM_HEADER)).toBe("replica");
    // The person who made the change reads it back (their cookie holds its WAL position): from the primary.
    const own = await getSchedule("replica-1", wrote);
    expect(own.schedule).toMatchObject({ description: "second", enabled: false });
    expect(own.res.headers.get(READ_FROM_HEADER)).toBe("primary");
    expect(own.res.headers.get(READ_FALLBACK_HEADER)).toMatch(/your last change/);
    // ...and so do the metrics: the pause has not reached the standby.
    const metrics = await call(await routes.metrics(), "GET", "metrics");
    expect(metrics.headers.get(READ_FROM_HEADER)).toBe("replica");
    const text = await metrics.text();
    expect(text).toMatch(/slotkeeper_schedules\{status="healthy",handler="noop"\} 1/);
    expect(text).not.toMatch(/slotkeeper_schedules\{status="paused",handler="noop"\} 1/);
    // The primary's own count, after the second pass, has the pause.
    expect(await pausedOn(onPrimary)).toBe(1);

    // The lag grows while replay stays paused, and is shown once above the threshold (1 s here).
    const lagging = await until("health reports the lag", health, (h) => h.replica.warn && (h.replica.lagSeconds ?? 0) > 1);
    expect(lagging.ok).toBe(true);
    expect(lagging.replica).toMatchObject({ readsFrom: "replica", state: "streaming", replayPaused: true });
    expect(lagging.replica.lagBytes).toBeGreaterThan(0);
    expect(healthAnswerSchema.parse(lagging)).toEqual(lagging);
    expect(replicaNotice(lagging.replica)?.title).toMatch(/^Read replica \d+s behind \(replay paused\)\.$/);
    const overview = await call(await routes.overview(), "GET", "overview");
    expect(overview.status).toBe(200);
    expect(Number(overview.headers.get(REPLICA_LAG_HEADER))).toBeGreaterThan(1);

    await onStandby.query("SELECT pg_wal_replay_resume()");
    const caughtUp = await until("the console shows the primary's value", () => getSchedule("replica-1"), (r) => r.schedule.description === "second");
    expect(caughtUp.schedule.enabled).toBe(false);
    expect(caughtUp.res.headers.get(READ_FROM_HEADER)).toBe("replica");
    // Once the standby has replayed the change, its author reads there too.
    await until("the author's reads go back to the standby", () => getSchedule("replica-1", wrote), (r) => r.res.headers.get(READ_FROM_HEADER) === "replica");
    const calm = await until("the lag falls back", health, (h) => !h.replica.warn);
    expect(calm.replica.lagSeconds).toBeLessThanOrEqual(1);
    expect(replicaNotice(calm.replica)).toBeNull();
  });

  it("sk_now() on the standby reads the replicated clock row", async () => {
    await onPrimary.query("UPDATE sk_clock SET frozen_at = '2031-05-06T07:08:09Z', shift = interval '0' WHERE id = 1");
    const at = await until("the standby's sk_now() follows the primary's clock", async () => (await onStandby.query<{ t: Date }>("SELECT sk_now() AS t")).rows[0].t.toISOString(), (t) => t === "2031-05-06T07:08:09.000Z");
    expect(at).toBe((await onPrimary.query<{ t: Date }>("SELECT sk_now() AS t")).rows[0].t.toISOString());
    await onPrimary.query("UPDATE sk_clock SET frozen_at = NULL, shift = interval '0' WHERE id = 1");
    await until("the clock runs again on the standby", async () => (await onStandby.query("SELECT frozen_at FROM sk_clock WHERE id = 1")).rows[0].frozen_at, (f) => f === null);
  });

  it("falls back to the primary, and says so, while the standby is down; goes back to it once it streams again", async () => {
    standby.halt();
    // Written while the standby is down: only the primary can answer with it.
    const before = await getSchedule("replica-1");
    const patched = await call(await routes.schedule(), "PATCH", "schedules/replica-1", { params: { name: "replica-1" }, body: { description: "third", version: before.schedule.version } });
    expect(patched.status).toBe(200);

    const down = await getSchedule("replica-1");
    expect(down.schedule.description).toBe("third");
    expect(down.res.headers.get(READ_FROM_HEADER)).toBe("primary");
    expect(down.res.headers.get(READ_FALLBACK_HEADER)).toMatch(/standby/);
    const overview = await call(await routes.overview(), "GET", "overview");
    expect(overview.status).toBe(200);
    expect(overview.headers.get(READ_FROM_HEADER)).toBe("primary");

    const h = await until("health says the standby is unreachable", health, (x) => x.replica.state === "unreachable");
    expect(h.ok).toBe(true);
    expect(h.replica).toMatchObject({ readsFrom: "primary", warn: true });
    expect(healthAnswerSchema.parse(h)).toEqual(h);
    expect(h.replica.reason).not.toContain(String(standby.port)); // /api/health answers anyone
    expect(replicaNotice(h.replica)?.title).toBe("Read replica unavailable.");

    await standby.start();
    await until("reads go back to the standby", () => getSchedule("replica-1"), (r) => r.res.headers.get(READ_FROM_HEADER) === "replica");
    expect(await descriptionOn(onStandby, "replica-1")).toBe("third");
  });
});
