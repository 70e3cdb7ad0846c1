import os from "node:os";
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { CommandsPolicy } from "../config";
import type { Db } from "../db/client";

/** What a worker tells the console about a handler it can run. */
export const handlerInfoSchema = z.object({ name: z.string(), idempotent: z.boolean(), description: z.string() }).strict();
export type HandlerInfo = z.infer<typeof handlerInfoSchema>;

/** A fresh worker id: host, pid and a random suffix, so a restarted process is a new worker. */
export function newWorkerId(): string {
  return `${os.hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

/**
 * Insert (or revive) this worker's row; its heartbeat is stamped with the database clock.
 * `commands` is what the worker's `command` handler may run (SLOTKEEPER_COMMANDS): null when it does
 * not serve `command`, so the console can say which workers run programs.
 */
export async function registerWorker(
  db: Db,
  w: { id: string; concurrency: number; handlers: HandlerInfo[]; version: string; commands?: CommandsPolicy; queues?: Record<string, number> },
): Promise<void> {
  const commands = w.commands === undefined || w.commands === null ? null : JSON.stringify(w.commands);
  const queues: QueueLoad[] = Object.entries(w.queues ?? { default: w.concurrency }).map(([name, concurrency]) => ({ name, concurrency, inFlight: 0 }));
  await db.execute(sql`
    INSERT INTO workers (id, hostname, pid, concurrency, handlers, started_at, last_heartbeat_at, version, commands, queues)
    VALUES (${w.id}, ${os.hostname()}, ${process.pid}, ${w.concurrency}, ${JSON.stringify(w.handlers)}::jsonb, sk_now(), sk_now(), ${w.version}, ${commands}::jsonb, ${JSON.stringify(queues)}::jsonb)
    ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = sk_now(), stopped_at = NULL, handlers = excluded.handlers, commands = excluded.commands,
      concurrency = excluded.concurrency, queues = excluded.queues`);
}

/** A queue a worker serves: its concurrency and how many of its runs the worker held at its last heartbeat. */
export const queueLoadSchema = z.object({ name: z.string(), concurrency: z.number().int(), inFlight: z.number().int() }).strict();
export type QueueLoad = z.infer<typeof queueLoadSchema>;

/** Record that the worker is alive and how many handlers it is running (in all, and per queue when given). */
export async function heartbeatWorker(db: Db, id: string, inFlight: number, queues?: QueueLoad[]): Promise<void> {
  await db.execute(sql`UPDATE workers SET last_heartbeat_at = sk_now(), in_flight = ${inFlight},
    queues = coalesce(${queues ? JSON.stringify(queues) : null}::jsonb, queues), stopped_at = NULL WHERE id = ${id}`);
}

/** Mark a clean exit, so the console shows the worker as gone rather than silent. */
export async function markWorkerStopped(db: Db, id: string): Promise<void> {
  await db.execute(sql`UPDATE workers SET stopped_at = sk_now(), in_flight = 0,
    queues = coalesce((SELECT jsonb_agg(q || '{"inFlight": 0}'::jsonb) FROM jsonb_array_elements(queues) q), '[]'::jsonb) WHERE id = ${id}`);
}

/** Rows of workers that stopped long ago are deleted so the table does not grow forever. */
export async function pruneWorkers(db: Db, olderThanSeconds: number): Promise<number> {
  const r = await db.execute(sql`
    DELETE FROM workers WHERE last_heartbeat_at < sk_now() - make_interval(secs => ${olderThanSeconds})`);
  return r.rowCount ?? 0;
}
