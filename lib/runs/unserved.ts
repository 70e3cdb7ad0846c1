/**
 * Routing, as the API tells it: which handlers no live worker serves right now. A worker claims
 * only runs whose handler it serves (lib/runs/claim/served.ts), so a run whose handler no live
 * worker has stays pending, attempts untouched, until one that has it starts. Its answer (and its
 * schedule's) then carries `unservedHandler: { handler, since }`, since being when the run (the
 * schedule's oldest due run) started waiting. Live is the workers page's rule (lib/workers/liveness.ts).
 */
import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { liveWorker } from "../workers/liveness";
import { servesHandler } from "../workers/serves";

/** `{ handler, since }` on a run or schedule whose handler no live worker serves. */
export const unservedHandlerSchema = z.object({ handler: z.string(), since: z.string().nullable() }).strict();
export type UnservedHandler = z.infer<typeof unservedHandlerSchema>;

/** SQL: true when no live worker serves the handler named by `handler` (a text expression). */
export function unservedSql(handler: SQL): SQL {
  return sql`NOT EXISTS (SELECT 1 FROM workers lw WHERE ${liveWorker("lw")} AND ${servesHandler("lw", handler)})`;
}

/** Of these handler names, the ones no live worker serves. */
export async function unservedHandlers(db: Pick<Db, "execute">, names: readonly string[]): Promise<Set<string>> {
  const distinct = [...new Set(names)];
  if (distinct.length === 0) return new Set();
  const r = await db.execute<{ handler: string }>(sql`
    SELECT h.handler FROM unnest(${sql.param(distinct)}::text[]) AS h(handler) WHERE ${unservedSql(sql`h.handler`)}`);
  return new Set(r.rows.map((x) => x.handler));
}
