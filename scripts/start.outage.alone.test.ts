// Runs in the alone pass of npm test (vitest.config.mts): it builds the console when stale and runs
// the whole product twice, which would crowd the timing-sensitive files of the parallel pass.
// The whole product stopped for real and started again: `npm start` (scripts/start.ts: the console
// and one worker) is killed with SIGKILL, process group and all, over three schedules firing every
// 4 s (skip, latest, all), the database clock is moved 45 s past the kill while nothing runs, and
// `npm start` is started again. What ran is read from an HTTP receiver this test runs (the http
// handler calls it with the slot's idempotency key) and from the runs table; what should have run
// comes from slot arithmetic (slot k at k × 4 s), not from Slotkeeper's catch-up code.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { portIsFree } from "../lib/db/embedded";
import { runClockFrom, setClock } from "../lib/testing/clock";
import { createTestDatabase, type TestDatabase } from "../lib/testing/db";
import { startReceiver } from "../lib/testing/receiver";
import { waitUntil } from "../lib/testing/wait";
import { ensureBuild } from "./chaos/web";

const EVERY_MS = 4_000;
const OUTAGE_MS = 45_000;
const GRACE_MS = 30_000;
const POLICIES = ["skip", "latest", "all"] as const;
const ROOT = path.resolve(import.meta.dirname, "..");

let t: TestDatabase;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let product: ChildProcess | undefined;
let output = "";

beforeAll(async () => {
  t = await createTestDatabase();
  receiver = await startReceiver();
}, 120_000);

afterAll(async () => {
  if (product?.pid && product.exitCode === null) process.kill(-product.pid, "SIGKILL");
  await receiver?.close();
  await t?.drop();
});

/** Requests the http handler made so far: idempotency key → how many arrived. */
function received(): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of receiver.received) {
    const key = String(r.headers["idempotency-key"] ?? "");
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

async function freePort(): Promise<number> {
  for (let p = 3400 + Math.floor(Math.random() * 500); p < 4400; p++) if (await portIsFree(p, "0.0.0.0")) return p;
  throw new Error("no free port for the console");
}

/** `npm start` as a user runs it (its own process group, so one signal reaches the console and the worker). */
async function startProduct(port: number, dataDir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, DATABASE_URL: t.url, PORT: String(port), SLOTKEEPER_DATA_DIR: dataDir, SLOTKEEPER_OUTBOUND_ALLOW: "127.0.0.1,::1,localhost", LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.setEncoding("utf8").on("data", (c: string) => (output += c));
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (output += c));
  const exited = new Promise((r) => child.once("exit", r));
  await Promise.race([
    waitUntil(async () => output.includes("slotkeeper: ready in"), 300_000, "npm start to be ready", 200),
    exited.then(() => {
      throw new Error(`npm start exited before it was ready:\n${output.slice(-3000)}`);
    }),
  ]);
  return child;
}

async function killProduct(child: ChildProcess, signal: NodeJS.Signals) {
  const exited = new Promise((r) => child.once("exit", r));
  process.kill(-child.pid!, signal);
  await exited;
  // The worker and the console are in the group too; wait until no process of it is left.
  await waitUntil(
    async () => {
      try {
        process.kill(-child.pid!, 0);
        return false;
      } catch {
        return true;
      }
    },
    30_000,
    "every process of npm start to exit",
  );
}

const keyOf = (scheduleId: number, slotMs: number) => `sk:${scheduleId}:${new Date(slotMs).toISOString()}`;
const dbNowMs = async () => (await t.pool.query<{ now: Date }>("SELECT sk_now() AS now")).rows[0].now.getTime();

describe("npm start killed for 45 s over three 4-second schedules", () => {
  it("skip runs none of the missed slots, latest exactly one, all every one; slots before and after the outage run", async () => {
    await ensureBuild((line) => console.log(line));
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "slotkeeper-outage-"));
    const port = await freePort();
    await setClock(t.pool, null);
    product = await startProduct(port, dataDir);

    // Three schedules through the console's API, as a user creates them.
    const ids: Record<(typeof POLICIES)[number], number> = { skip: 0, latest: 0, all: 0 };
    for (const catchUp of POLICIES) {
      const res = await fetch(`http://127.0.0.1:${port}/api/schedules`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: `every-4s-${catchUp}`, handler: "http", payload: { url: `${receiver.url}/hook` }, everySeconds: 4, catchUp, leaseSeconds: 30 }),
      });
      expect(res.status).toBe(201);
      ids[catchUp] = (await res.json()).schedule.id;
    }
    const doneSlots = async (id: number) =>
      (await t.pool.query<{ slot: Date }>(`SELECT scheduled_for AS slot FROM run_status WHERE schedule_id = $1 AND state = 'done' ORDER BY scheduled_for`, [id])).rows.map((r) => r.slot.getTime());

    // Up: wait for two slots of each to run, then kill everything right after a slot has run
    // everywhere (so no run is in flight) and well before the next one is due.
    let lastBefore = 0;
    await waitUntil(
      async () => {
        const done = await Promise.all(POLICIES.map((p) => doneSlots(ids[p])));
        if (done.some((d) => d.length < 2)) return false;
        const common = Math.min(...done.map((d) => d[d.length - 1]));
        const now = await dbNowMs();
        if (done.every((d) => d[d.length - 1] === common) && now < common + EVERY_MS - 1_500) {
          lastBefore = common;
          return true;
        }
        return false;
      },
      120_000,
      "two slots of every schedule to run, just after a slot",
      50,
    );
    const killedAt = await dbNowMs();
    await killProduct(product, "SIGKILL");
    product = undefined;

    // Down for 45 s of database time: the clock stands at kill + 45 s while npm start comes back,
    // so the oracle knows the instant the product first looks.
    const upAt = killedAt + OUTAGE_MS;
    await setClock(t.pool, new Date(upAt));
    const requestsBefore = received();
    product = await startProduct(port, dataDir);

    // Slot arithmetic: the slots that fell in the outage, which of them were missed when found at
    // upAt (the next one due, or older than the 30 s grace), and the newest due one.
    const outage: number[] = [];
    for (let s = lastBefore + EVERY_MS; s <= upAt; s += EVERY_MS) outage.push(s);
    const newest = outage[outage.length - 1];
    const missed = outage.filter((s) => s + EVERY_MS <= upAt || s < upAt - GRACE_MS);
    expect(missed).toEqual(outage.slice(0, -1));
    expect(missed.length).toBeGreaterThanOrEqual(10);

    // Everything due at upAt settled: nothing of them waiting or running, every slot written.
    await waitUntil(
      async () => {
        const { rows } = await t.pool.query<{ open: number; newest: number }>(
          `SELECT (SELECT count(*)::int FROM run_queue WHERE schedule_id = ANY($1::bigint[]) AND scheduled_for <= $2) AS open,
                  (SELECT count(*)::int FROM runs WHERE schedule_id = ANY($1::bigint[]) AND scheduled_for = $3) AS newest`,
          [Object.values(ids), new Date(upAt), new Date(newest)],
        );
        return rows[0].open === 0 && rows[0].newest === 3;
      },
      120_000,
      "the slots due at restart to be settled",
    ).catch(async (e: Error) => {
      // What is still open, with its attempts and errors, and the product's output: enough to tell a stuck claim from a retry waiting on the frozen clock.
      const open = await t.pool.query(
        `SELECT q.schedule_id, q.scheduled_for, q.state, q.run_after, q.attempts, q.lease_owner, q.lease_expires_at, r.last_error, sk_now() AS now
         FROM run_queue q JOIN runs r ON r.id = q.run_id WHERE q.schedule_id = ANY($1::bigint[]) AND q.scheduled_for <= $2 ORDER BY q.scheduled_for`,
        [Object.values(ids), new Date(upAt)],
      );
      const workers = await t.pool.query(`SELECT id, started_at, last_heartbeat_at, stopped_at FROM workers ORDER BY started_at`);
      throw new Error(`${e.message}\nopen: ${JSON.stringify(open.rows)}\nworkers: ${JSON.stringify(workers.rows)}\noutput: ${output.slice(-4000)}`);
    });
    // Then let time run on from there, and wait for two slots after the outage to run everywhere.
    await runClockFrom(t.pool, new Date(upAt));
    const after = [newest + EVERY_MS, newest + 2 * EVERY_MS];
    await waitUntil(() => POLICIES.every((p) => after.every((s) => received().has(keyOf(ids[p], s)))), 120_000, "two slots after the outage to run");
    await killProduct(product, "SIGINT");
    product = undefined;

    const arrived = received();
    const ran = (p: (typeof POLICIES)[number], slots: number[]) => slots.filter((s) => arrived.has(keyOf(ids[p], s)));
    const { rows } = await t.pool.query<{ schedule_id: string; scheduled_for: Date; skipped_until: Date | null; skip_reason: string | null; coalesced_into: Date | null; state: string }>(
      `SELECT schedule_id, scheduled_for, skipped_until, skip_reason, coalesced_into, state FROM runs WHERE schedule_id = ANY($1::bigint[]) AND scheduled_for > $2 AND scheduled_for <= $3`,
      [Object.values(ids), new Date(lastBefore), new Date(upAt)],
    );
    const fateOf = (id: number, s: number) => {
      const r = rows.find((x) => Number(x.schedule_id) === id && x.scheduled_for.getTime() <= s && (x.skipped_until ?? x.scheduled_for).getTime() >= s);
      return r ? (r.state === "skipped" ? `${r.skip_reason}${r.coalesced_into ? `→${r.coalesced_into.getTime()}` : ""}` : r.state) : "absent";
    };
    const summary = Object.fromEntries(POLICIES.map((p) => [p, ran(p, outage).length]));
    console.log(JSON.stringify({ event: "test:outage", outageSlots: outage.length, missed: missed.length, ranInOutage: summary }));

    // Before the outage, every slot ran (once: nothing was in flight at the kill).
    for (const p of POLICIES) {
      const before = (await doneSlots(ids[p])).filter((s) => s <= lastBefore);
      expect(before.length).toBeGreaterThanOrEqual(2);
      for (const s of before) expect(requestsBefore.get(keyOf(ids[p], s)), `${p} ${s} before the outage`).toBe(1);
    }
    // skip: none of the missed slots ran; each is recorded missed. The newest slot, due 0-4 s
    // before the restart and inside its own interval, was on time and ran.
    expect(ran("skip", missed)).toEqual([]);
    expect(missed.map((s) => fateOf(ids.skip, s))).toEqual(missed.map(() => "missed"));
    expect(ran("skip", [newest])).toEqual([newest]);
    // latest: exactly one of the outage's slots ran, the newest; the rest were coalesced into it.
    expect(ran("latest", outage)).toEqual([newest]);
    expect(missed.map((s) => fateOf(ids.latest, s))).toEqual(missed.map(() => `coalesced→${newest}`));
    // all: every one ran, each once.
    expect(ran("all", outage)).toEqual(outage);
    for (const s of outage) expect(arrived.get(keyOf(ids.all, s))).toBe(1);
    // After the outage: every schedule runs its slots again.
    for (const p of POLICIES) expect(ran(p, after)).toEqual(after);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 900_000);
});
