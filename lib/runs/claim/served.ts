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
