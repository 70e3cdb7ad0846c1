import { sql } from "drizzle-orm";

/**
 * Routing: a claim takes only runs whose handler the claiming worker serves. The handler's name is
 * a copy on the queue row (run_queue.handler, kept by the queue triggers), so this is a filter on
 * the row the claim reads anyway, not a join. `handlers` is the worker's list of names; null (tests
 * and tools that claim without a worker) serves every handler. A run no live worker serves stays
 * pending with its attempts untouched (lib/runs/unserved.ts says so).
 */
export const SERVED = sql`(${sql.placeholder("handlers")}::text[] IS NULL OR q.handler = ANY(${sql.placeholder("handlers")}::text[]))`;

/** The `handlers` parameter: the names, or null to serve every handler. */
export const servedParam = (handlers: readonly string[] | null | undefined): string[] | null => (handlers ? [...handlers] : null);

/**
 * Queues: a claim takes only runs of the queues named (run_queue.queue, the schedule's queue copied
 * like its handler). The worker claims one queue at a time, up to that queue's free slots
 * (lib/runs/claim/index.ts); null (tests and tools) takes every queue.
 */
export const QUEUED = sql`(${sql.placeholder("queues")}::text[] IS NULL OR q.queue = ANY(${sql.placeholder("queues")}::text[]))`;
/** The `queues` parameter: the names, or null for every queue. */
export const queuesParam = (queues: readonly string[] | null | undefined): string[] | null => (queues ? [...queues] : null);
