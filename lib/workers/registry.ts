import os from "node:os";
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import type { CommandsPolicy } from "../config";
import type { Db } from "../db/client";

/** What a worker tells the console about a handler it can run. */
export type HandlerInfo = { name: string; idempotent: boolean; description: string };

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
  w: { id: string; concurrency: number; handlers: HandlerInfo[]; version: string; commands?: CommandsPolicy },
): Promise<void> {
  const commands = w.commands === undefined || w.commands === null ? null : JSON.stringify(w.commands);
  await db.execute(sql`
    INSERT INTO workers (id, hostname, pid, concurrency, handlers, started_at, last_heartbeat_at, version, commands)
    VALUES (${w.id}, ${os.hostname()}, ${process.pid}, ${w.concurrency}, ${JSON.stringify(w.handlers)}::jsonb, sk_now(), sk_now(), ${w.version}, ${commands}::jsonb)
    ON CONFLICT (id) DO UPDATE SET last_heartbeat_at = sk_now(), stopped_at = NULL, handlers = excluded.handlers, commands = excluded.commands`);
}

/** Record that the worker is alive and how many handlers it is running. */
export async function heartbeatWorker(db: Db, id: string, inFlight: number): Promise<void> {
  await db.execute(sql`UPDATE workers SET last_heartbeat_at = sk_now(), in_flight = ${inFlight}, stopped_at = NULL WHERE id = ${id}`);
}

/** Mark a clean exit, so the console shows the worker as gone rather than silent. */
export async function markWorkerStopped(db: Db, id: string): Promise<void> {
  await db.execute(sql`UPDATE workers SET stopped_at = sk_now(), in_flight = 0 WHERE id = ${id}`);
}

/** Rows of workers that stopped long ago are deleted so the table does not grow forever. */
export async function pruneWorkers(db: Db, olderThanSeconds: number): Promise<number> {
  const r = await db.execute(sql`
    DELETE FROM workers WHERE last_heartbeat_at < sk_now() - make_interval(secs => ${olderThanSeconds})`);
  return r.rowCount ?? 0;
}
