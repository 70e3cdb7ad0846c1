/**
 * Test helpers for the alert and metrics tests: rows inserted with plain SQL (only the columns a
 * test cares about) and a local HTTP server that records what it receives.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type pg from "pg";

type Queryable = Pick<pg.Pool, "query">;

/** Insert a schedule (every 300 s unless told otherwise) and return its id. */
export async function insertSchedule(
  db: Queryable,
  name: string,
  opts: { everySeconds?: number; cron?: string; enabled?: boolean; createdAt?: string; lateAfterSeconds?: number; backlogAfterSeconds?: number } = {},
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO schedules (name, handler, cron, every_seconds, enabled, next_slot_at, partition, created_at, late_after_seconds, backlog_after_seconds)
     VALUES ($1, 'noop', $2, $3, $4, sk_now(), 0, coalesce($5::timestamptz, sk_now()), $6, $7) RETURNING id`,
    [name, opts.cron ?? null, opts.cron ? null : (opts.everySeconds ?? 300), opts.enabled ?? true, opts.createdAt ?? null, opts.lateAfterSeconds ?? null, opts.backlogAfterSeconds ?? null],
  );
  return Number(rows[0].id);
}

/** Insert a run of a schedule for slot `slot` in `state`; started/finished only when given. */
export async function insertRun(
  db: Queryable,
  scheduleId: number,
  slot: string,
  state: "pending" | "running" | "done" | "dead" | "skipped",
  opts: { startedAt?: string; finishedAt?: string; runAfter?: string; attempts?: number } = {},
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, max_attempts, attempts, started_at, finished_at)
     VALUES ($1, 0, $2, $2, coalesce($3::timestamptz, $2), $4, 6, $5, $6, $7) RETURNING id`,
    [scheduleId, slot, opts.runAfter ?? null, state, opts.attempts ?? (state === "pending" ? 0 : 1), opts.startedAt ?? null, opts.finishedAt ?? null],
  );
  return Number(rows[0].id);
}

export type Received = { path: string; headers: http.IncomingHttpHeaders; body: unknown };

/** A local HTTP server on 127.0.0.1 recording each request; `status` decides what it answers. */
export async function startReceiver(status: (req: Received) => number = () => 200) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      const r = { path: req.url ?? "/", headers: req.headers, body };
      received.push(r);
      const code = status(r);
      res.writeHead(code, { "content-type": "text/plain" }).end(code < 300 ? "ok" : "receiver says no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
