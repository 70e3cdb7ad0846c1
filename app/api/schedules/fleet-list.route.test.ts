// The schedule list and the Overview over a seeded fleet (lib/testing/fleet.ts), against an oracle
// this test works out from the seed's arithmetic alone: every filter and sort, walked page by page
// to the end, returns each matching schedule exactly once and in order; the Overview's counts, worst
// lists and wait histogram are what the arithmetic says; bad parameters are a 400 naming the field.
import { beforeAll, describe, expect, it } from "vitest";
import { evaluateAlerts } from "@/lib/alerts/evaluate";
import { setClock } from "@/lib/testing/clock";
import { setupTestDatabase } from "@/lib/testing/db";
import { seedFleet } from "@/lib/testing/fleet";

const t = setupTestDatabase({ routes: true, reset: false });
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
let listGet: Handler;
let overviewGet: Handler;
const ctx = { params: Promise.resolve({}) };
const N = 3_000;
const NOW = Date.parse("2030-01-01T10:00:00Z");

type Status = "healthy" | "late" | "failing" | "backlogged" | "paused";
type Model = {
  i: number;
  id: number;
  name: string;
  description: string;
  handler: string;
  queue: string;
  tag: string;
  enabled: boolean;
  managed: boolean;
  cron: boolean;
  nextAt: number;
  /** Epoch ms of the last success, or null. */
  successAt: number | null;
  dead: boolean;
  pendingSince: number | null;
  status: Status;
};

/** Schedule i as the seed's doc comment states it, with its status by the rules docs/alerts-and-metrics.md states. */
function model(i: number, id: number): Model {
  const every = i % 2 === 1 ? 60 + (i % 5) * 60 : null;
  const gap = every ?? 3600;
  const successAt = i % 5 !== 0 ? NOW - (i % 50) * 60_000 : null;
  const pendingSince = i % 17 === 0 ? NOW - (i % 40) * 60_000 - 1000 : null;
  const enabled = i % 13 !== 0;
  const dead = i % 101 === 0;
  const since = successAt === null ? 30 * 86_400 : (NOW - successAt) / 1000;
  const status: Status = !enabled
    ? "paused"
    : dead
      ? "failing"
      : since > 2 * gap + 30
        ? "late"
        : pendingSince !== null && (NOW - pendingSince) / 1000 > Math.max(gap, 60)
          ? "backlogged"
          : "healthy";
  return {
    i,
    id,
    name: `fleet-${String(i).padStart(7, "0")}`,
    description: i % 1000 === 7 ? "the needle job" : i % 3 === 0 ? "nightly report" : "sync job",
    handler: `h${i % 8}`,
    queue: i % 10 === 0 ? "bulk" : "default",
    tag: `team-${i % 4}`,
    enabled,
    managed: i % 7 === 0,
    cron: i % 2 === 0,
    nextAt: NOW + ((i * 37) % 86_400) * 1000,
    successAt,
    dead,
    pendingSince,
    status,
  };
}

let fleet: Model[] = [];

beforeAll(async () => {
  listGet = (await import("./route")).GET as unknown as Handler;
  overviewGet = (await import("../overview/route")).GET as unknown as Handler;
  await setClock(t.pool, new Date(NOW).toISOString());
  await seedFleet(t.pool, N);
  const ids = new Map((await t.pool.query<{ id: string; name: string }>("SELECT id, name FROM schedules")).rows.map((r) => [r.name, Number(r.id)]));
  fleet = Array.from({ length: N }, (_, k) => model(k + 1, ids.get(`fleet-${String(k + 1).padStart(7, "0")}`)!));
}, 60_000);

async function get(qs: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await listGet(new Request(`http://127.0.0.1/api/schedules?${qs}`), ctx);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Every page to the end; each page's rows checked against the oracle's status too. */
async function walk(qs: string, limit: number): Promise<{ names: string[]; pages: number }> {
  const names: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await get(`${qs}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const rows = r.body.schedules as { name: string; status: Status }[];
    expect(rows.length).toBeLessThanOrEqual(limit);
    for (const row of rows) expect(row.status, row.name).toBe(fleet.find((m) => m.name === row.name)!.status);
    names.push(...rows.map((x) => x.name));
    cursor = r.body.nextCursor as string | null;
    pages++;
    expect(pages).toBeLessThan(200);
  } while (cursor);
  return { names, pages };
}

const byName = (a: Model, b: Model) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id);
const ORDER: Status[] = ["failing", "late", "backlogged", "healthy", "paused"];
const sorts: Record<string, (a: Model, b: Model) => number> = {
  name: byName,
  nextDue: (a, b) => a.nextAt - b.nextAt || a.id - b.id,
  lastSuccess: (a, b) => (a.successAt ?? -Infinity) - (b.successAt ?? -Infinity) || a.id - b.id,
  status: (a, b) => ORDER.indexOf(a.status) - ORDER.indexOf(b.status) || byName(a, b),
};

const cases: { qs: string; keep: (m: Model) => boolean; sort: keyof typeof sorts; limit: number }[] = [
  { qs: "", keep: () => true, sort: "name", limit: 500 },
  { qs: "search=needle", keep: (m) => m.description.includes("needle"), sort: "name", limit: 2 },
  { qs: "search=NIGHTLY&handler=h3", keep: (m) => m.description.includes("nightly") && m.handler === "h3", sort: "name", limit: 37 },
  { qs: "search=_", keep: () => false, sort: "name", limit: 50 },
  // Terms of several words: the index is probed with the rarest part, the whole term decides.
  { qs: "search=fleet-000012", keep: (m) => m.name.includes("fleet-000012"), sort: "name", limit: 3 },
  { qs: "search=The%20Needle%20job&sort=nextDue", keep: (m) => m.description.includes("the needle job"), sort: "nextDue", limit: 2 },
  { qs: "search=sync%20report", keep: () => false, sort: "name", limit: 50 },
  { qs: "status=late&sort=nextDue", keep: (m) => m.status === "late", sort: "nextDue", limit: 173 },
  { qs: "status=healthy,backlogged&sort=lastSuccess&queue=bulk", keep: (m) => (m.status === "healthy" || m.status === "backlogged") && m.queue === "bulk", sort: "lastSuccess", limit: 29 },
  { qs: "status=backlogged", keep: (m) => m.status === "backlogged", sort: "name", limit: 10 },
  { qs: "sort=status&tag=team-1", keep: (m) => m.tag === "team-1", sort: "status", limit: 97 },
  { qs: "sort=status&status=failing,paused,healthy", keep: (m) => ["failing", "paused", "healthy"].includes(m.status), sort: "status", limit: 211 },
  { qs: "managed=true&paused=false&timing=cron", keep: (m) => m.managed && m.enabled && m.cron, sort: "name", limit: 41 },
  { qs: "status=failing", keep: (m) => m.status === "failing", sort: "name", limit: 5 },
  { qs: "managedBy=fleet.yaml&status=paused&sort=nextDue", keep: (m) => m.managed && m.status === "paused", sort: "nextDue", limit: 7 },
  { qs: "sort=lastSuccess&timing=interval&enabled=true", keep: (m) => !m.cron && m.enabled, sort: "lastSuccess", limit: 300 },
];

describe("GET /api/schedules over a fleet", () => {
  for (const c of cases) {
    it(`?${c.qs || "(everything)"} walks to the end, each match once and in order`, async () => {
      const expected = fleet.filter(c.keep).sort(sorts[c.sort]).map((m) => m.name);
      const got = await walk(c.qs, c.limit);
      expect(got.names.length).toBe(expected.length);
      expect(got.names).toEqual(expected);
    }, 60_000);
  }

  it("takes an earlier version's cursor (the last name) on the name sort", async () => {
    const r = await get("cursor=fleet-0000010&limit=3");
    expect((r.body.schedules as { name: string }[]).map((s) => s.name)).toEqual(["fleet-0000011", "fleet-0000012", "fleet-0000013"]);
  });

  it("refuses bad parameters with a 400 naming the field", async () => {
    for (const [qs, field] of [
      ["status=bogus", "status"],
      ["sort=size", "sort"],
      ["limit=0", "limit"],
      ["limit=ten", "limit"],
      ["paused=yes", "paused"],
      ["managed=1", "managed"],
      ["timing=weekly", "timing"],
      ["tag=bad%20tag", "tag"],
      ["handler=", "handler"],
      ["sort=nextDue&cursor=garbage", "cursor"],
    ] as const) {
      const r = await get(qs);
      expect(r.status, qs).toBe(400);
      expect((r.body.error as { field?: string }).field, qs).toBe(field);
    }
  });
});

describe("GET /api/overview over a fleet", () => {
  it("counts by status as the last alert pass found them, lists the worst 50 both ways and buckets the due runs' waits as the arithmetic says", async () => {
    const get = async () => {
      const res = await overviewGet(new Request("http://127.0.0.1/api/overview"), ctx);
      expect(res.status).toBe(200);
      return (await res.json()) as {
        totals: { schedules: number };
        statusCounts: Record<Status, number>;
        statusAsOf: string | null;
        notEvaluated: number;
        worstSinceLastSuccess: { name: string }[];
        worstOldestPending: { name: string }[];
        pendingWait: { below: number | null; count: number }[];
      };
    };
    // Before any alert pass no schedule has been judged: every one is counted as not evaluated.
    const unjudged = await get();
    expect(unjudged.statusAsOf).toBeNull();
    expect(unjudged.notEvaluated).toBe(N);
    for (const st of ORDER) expect(unjudged.statusCounts[st], st).toBe(0);
    await evaluateAlerts(t.db, { publicUrl: "http://127.0.0.1", reminderSeconds: 0 });
    const o = await get();
    expect(o.statusAsOf).toBe(new Date(NOW).toISOString());
    expect(o.notEvaluated).toBe(0);
    expect(o.totals.schedules).toBe(N);
    for (const st of ORDER) expect(o.statusCounts[st], st).toBe(fleet.filter((m) => m.status === st).length);
    expect(o.worstSinceLastSuccess.map((s) => s.name)).toEqual([...fleet].sort(sorts.lastSuccess).slice(0, 50).map((m) => m.name));
    const pending = fleet.filter((m) => m.pendingSince !== null).sort((a, b) => a.pendingSince! - b.pendingSince! || a.id - b.id);
    expect(o.worstOldestPending.map((s) => s.name)).toEqual(pending.slice(0, 50).map((m) => m.name));
    const bounds = o.pendingWait.map((b) => b.below);
    const expectedCounts = bounds.map((below, k) => {
      const lo = k === 0 ? 0 : bounds[k - 1]!;
      return pending.filter((m) => {
        const wait = (NOW - m.pendingSince!) / 1000;
        return wait >= lo && (below === null || wait < below);
      }).length;
    });
    expect(o.pendingWait.map((b) => b.count)).toEqual(expectedCounts);
    expect(expectedCounts.reduce((a, b) => a + b, 0)).toBe(pending.length);
  }, 60_000);
});
