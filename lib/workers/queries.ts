import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { liveWorker } from "./liveness";
import type { HandlerInfo } from "./registry";

/** A worker as the console shows it. */
export type WorkerView = {
  id: string;
  hostname: string;
  pid: number;
  concurrency: number;
  handlers: HandlerInfo[];
  startedAt: string;
  lastHeartbeatAt: string;
  stoppedAt: string | null;
  inFlight: number;
  status: "alive" | "silent" | "stopped";
  partitions: number[];
  version: string;
  /** Which programs its `command` handler may run (SLOTKEEPER_COMMANDS): "all", these executables, or null when it does not run programs. */
  commands: "all" | string[] | null;
};

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
  }));
}
