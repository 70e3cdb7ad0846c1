import { escapeLiteral, type ClientBase, type Pool } from "pg";

export type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; "Plan Rows"?: number; "Workers Launched"?: number; Plans?: PlanNode[] };

function* nodes(n: PlanNode): Generator<PlanNode> {
  yield n;
  for (const c of n.Plans ?? []) yield* nodes(c);
}

/** Every node of an EXPLAIN (… FORMAT JSON) statement's plan, top down. */
export async function planNodes(client: Pick<ClientBase, "query">, explain: string): Promise<PlanNode[]> {
  const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(explain);
  return [...nodes(rows[0]["QUERY PLAN"][0].Plan)];
}

/**
 * The plan every pool runs `text` with (lib/db/client.ts plans generically): prepared, then
 * EXPLAIN EXECUTE with `values` (arrays of plain numbers or words), on a connection of `pool` that forces generic plans. An EXPLAIN
 * of the statement given its values would show a plan made for those values instead.
 */
export async function genericPlan(pool: Pool, text: string, values: unknown[]): Promise<PlanNode[]> {
  const client = await pool.connect();
  try {
    await client.query("SET plan_cache_mode = force_generic_plan");
    await client.query(`PREPARE generic_plan AS ${text}`);
    // EXECUTE's arguments are part of its text (a utility statement takes no bound parameters);
    // an untyped literal takes the type PREPARE inferred for its parameter.
    const literal = (v: unknown) =>
      v === null || v === undefined ? "NULL" : escapeLiteral(v instanceof Date ? v.toISOString() : Array.isArray(v) ? `{${v.join(",")}}` : String(v));
    const args = values.length ? `(${values.map(literal).join(", ")})` : "";
    const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE generic_plan${args}`);
    return [...nodes(rows[0]["QUERY PLAN"][0].Plan)];
  } finally {
    await client.query("DEALLOCATE ALL").catch(() => {});
    client.release();
  }
}

/** The tables a plan reads whole (its Seq Scan nodes). */
export const seqScanned = (plan: PlanNode[]) => plan.filter((n) => n["Node Type"] === "Seq Scan").map((n) => n["Relation Name"]);

/** Parallel workers an EXPLAIN ANALYZE's execution launched (its Gather nodes'). */
export const workersLaunched = (plan: PlanNode[]) => plan.reduce((n, node) => n + (node["Workers Launched"] ?? 0), 0);

/** The indexes a plan walks (its index and index-only scans, bitmap index scans). */
export const indexesWalked = (plan: PlanNode[]) => plan.flatMap((n) => (n["Index Name"] ? [n["Index Name"]] : []));

/** The tables an EXPLAIN (… FORMAT JSON) statement's plan reads whole. */
export async function seqScannedTables(client: Pick<ClientBase, "query">, explain: string): Promise<(string | undefined)[]> {
  return seqScanned(await planNodes(client, explain));
}
