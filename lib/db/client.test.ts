// A silent network: the proxy stops forwarding both ways and keeps the sockets open, so neither
// TCP nor PostgreSQL ever reports anything. The pool's query timeout is what notices.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../log";
import { startBlackhole, throughProxy } from "../testing/blackhole";
import { createTestDatabase, type TestDatabase } from "../testing/db";
import { waitUntil } from "../testing/wait";
import { listenForDueRuns } from "../../worker/wake";
import { RUNS_CHANNEL } from "../runs/requeue";
import { createPool, QUERY_READ_TIMEOUT } from "./client";

let t: TestDatabase;
let proxy: Awaited<ReturnType<typeof startBlackhole>>;
let url: string;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 2 });
  const u = new URL(t.url);
  proxy = await startBlackhole({ host: u.hostname, port: Number(u.port || 5432) });
  url = throughProxy(t.url, proxy.port);
});
afterAll(async () => {
  await proxy.close();
  await t.drop();
});

const pending = Symbol("pending");
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<typeof pending>((r) => setTimeout(() => r(pending), ms))]);

describe("createPool on a silent network", () => {
  it("fails a statement after queryTimeoutMs, drops the silent connections and answers on fresh ones", async () => {
    const pool = createPool(url, { max: 3, queryTimeoutMs: 400 });
    try {
      // Three connections in the pool, all idle when the network goes quiet.
      const held = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
      for (const c of held) c.release();
      const pids = new Set((await Promise.all([1, 2, 3].map(() => pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")))).map((r) => r.rows[0].pid));
      expect(proxy.silence()).toBeGreaterThanOrEqual(3);
      // The pool's own read timeout ends it (without one it waits for ever: the last case below).
      await expect(pool.query("SELECT 1")).rejects.toThrow(QUERY_READ_TIMEOUT);
      // One timeout, not one per pooled connection: the idle ones were dropped with it. The pool
      // never retries, so a statement handed a silent connection would reject as above; this one
      // is answered, by a backend none of the silent connections had.
      const r = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      expect(pids.has(r.rows[0].pid)).toBe(false);
      // Inside a transaction too: the checked-out client is dropped, not handed out again.
      const c = await pool.connect();
      await c.query("BEGIN");
      proxy.silence();
      await expect(c.query("SELECT 1")).rejects.toThrow(QUERY_READ_TIMEOUT);
      await expect(c.query("ROLLBACK")).rejects.toThrow();
      c.release();
      expect((await pool.query("SELECT 1 AS one")).rows[0].one).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("destroys a connection checked out before the timeout when it is released: the next checkout does not wait a second timeout", async () => {
    const timeout = 1500;
    const pool = createPool(url, { max: 3, queryTimeoutMs: timeout });
    try {
      // Two callers hold a connection each when the network goes quiet (a claim loop and a
      // heartbeat, say); the first times out, the second gives its connection back unused.
      const [a, b] = await Promise.all([pool.connect(), pool.connect()]);
      const pids = new Set([(await a.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid, (await b.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid]);
      proxy.silence();
      await expect(a.query("SELECT 1")).rejects.toThrow(QUERY_READ_TIMEOUT);
      a.release();
      b.release();
      // Handed b's silent connection again, the statement would reject with the read timeout (the
      // pool never retries): answered, by a backend neither silent connection had, it did not.
      const r = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      expect(pids.has(r.rows[0].pid)).toBe(false);
      // The pool has room again: neither silent connection is still counted.
      const held = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
      for (const c of held) c.release();
      expect(pool.totalCount).toBeLessThanOrEqual(3);
    } finally {
      await pool.end();
    }
  });

  it("without a query timeout the same statement waits for ever", async () => {
    const pool = createPool(url, { max: 1 });
    pool.on("error", () => {});
    try {
      await pool.query("SELECT 1");
      proxy.silence();
      expect(await within(pool.query("SELECT 1"), 1500)).toBe(pending);
    } finally {
      void pool.end().catch(() => {});
    }
  });
});

describe("listenForDueRuns on a silent network", () => {
  it("notices a silent LISTEN connection by its ping and listens again on a fresh one", async () => {
    let woken = 0;
    const listener = listenForDueRuns(url, () => woken++, createLogger("test", "error"), { queryTimeoutMs: 300 });
    try {
      await waitUntil(() => woken > 0, 5000, "the first LISTEN");
      proxy.silence();
      const before = woken;
      // The ping goes unanswered for 300 ms: the connection is dropped, a new one LISTENs and wakes once.
      await waitUntil(() => woken > before, 8000, "a new LISTEN connection after the silence");
      const reconnected = woken;
      await waitUntil(
        async () => {
          await t.pool.query(`NOTIFY ${RUNS_CHANNEL}`);
          return woken > reconnected;
        },
        5000,
        "a notification on the new connection",
        200,
      );
    } finally {
      await listener.stop();
    }
  });
});
