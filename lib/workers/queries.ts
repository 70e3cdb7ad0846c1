import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { liveWorker } from "./liveness";
import { handlerInfoSchema, queueLoadSchema, type HandlerInfo, type QueueLoad } from "./registry";

/** A worker as the console shows it. */
export const workerViewSchema = z
  .object({
    id: z.string(),
    hostname: z.string(),
    pid: z.number().int(),
    concurrency: z.number().int(),
    handlers: z.array(handlerInfoSchema),
    startedAt: z.string(),
    lastHeartbeatAt: z.string(),
    stoppedAt: z.string().nullable(),
    inFlight: z.number().int(),
    status: z.enum(["alive", "silent", "stopped"]),
    partitions: z.array(z.number().int()),
    version: z.string(),
    /** Which programs its `command` handler may run (SLOTKEEPER_COMMANDS): "all", these executables, or null when it does not run programs. */
    commands: z.union([z.literal("all"), z.array(z.string())]).nullable(),
    /** The queues it serves (SLOTKEEPER_QUEUES): each one's concurrency, runs held and free slots at its last heartbeat. */
    queues: z.array(queueLoadSchema.extend({ free: z.number().int() }).strict()),
    /** Free slots in all: concurrency minus runs held at its last heartbeat (0 once it stopped). */
    free: z.number().int(),
  })
  .strict();
export type WorkerView = z.infer<typeof workerViewSchema>;

/** Live workers first, then recently gone ones (last day), with the partitions each holds. */
export async function listWorkers(db: Db): Promise<WorkerView[]> {
  const r = await db.execute<{
    id: string;
    hostname: string;
    pid: number;
    concurrency: number;
    handlers: HandlerInfo[];
    started_at: Date;
    last_heartbeat_at: Date;
    stopped_at: Date | null;
    in_flight: number;
    alive: boolean;
    partitions: number[] | null;
    version: string;
    commands: "all" | string[] | null;
    queues: QueueLoad[] | null;
  }>(sql`
    SELECT w.*, ${liveWorker("w")} AS alive,
      (SELECT array_agg(pl.partition ORDER BY pl.partition) FROM partition_leases pl
        WHERE pl.owner = w.id AND pl.lease_expires_at > sk_now()) AS partitions
    FROM workers w
    WHERE w.last_heartbeat_at > sk_now() - interval '1 day'
    ORDER BY alive DESC, w.last_heartbeat_at DESC
    LIMIT 500`);
  return r.rows.map((w) => ({
    id: w.id,
    hostname: w.hostname,
    pid: w.pid,
    concurrency: w.concurrency,
    handlers: w.handlers ?? [],
    startedAt: new Date(w.started_at).toISOString(),
    lastHeartbeatAt: new Date(w.last_heartbeat_at).toISOString(),
    stoppedAt: w.stopped_at ? new Date(w.stopped_at).toISOString() : null,
    inFlight: w.in_flight,
    status: w.stopped_at ? "stopped" : w.alive ? "alive" : "silent",
    partitions: w.partitions ?? [],
    version: w.version,
    commands: w.commands ?? null,
    queues: (w.queues ?? []).map((q) => ({ ...q, free: w.stopped_at ? 0 : Math.max(0, q.concurrency - q.inFlight) })),
    free: w.stopped_at ? 0 : Math.max(0, w.concurrency - w.in_flight),
  }));
}
