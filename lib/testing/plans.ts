import type pg from "pg";

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; "Workers Launched"?: number; Plans?: PlanNode[] };

function* nodes(n: PlanNode): Generator<PlanNode> {
  yield n;
  for (const c of n.Plans ?? []) yield* nodes(c);
}

/** Every node of an EXPLAIN (… FORMAT JSON) statement's plan, top down. */
export async function planNodes(client: Pick<pg.ClientBase, "query">, explain: string): Promise<PlanNode[]> {
  const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(explain);
  return [...nodes(rows[0]["QUERY PLAN"][0].Plan)];
}

/** The tables a plan reads whole (its Seq Scan nodes). */
export const seqScanned = (plan: PlanNode[]) => plan.filter((n) => n["Node Type"] === "Seq Scan").map((n) => n["Relation Name"]);

/** Parallel workers an EXPLAIN ANALYZE's execution launched (its Gather nodes'). */
export const workersLaunched = (plan: PlanNode[]) => plan.reduce((n, node) => n + (node["Workers Launched"] ?? 0), 0);

/** The indexes a plan walks (its index and index-only scans, bitmap index scans). */
export const indexesWalked = (plan: PlanNode[]) => plan.flatMap((n) => (n["Index Name"] ? [n["Index Name"]] : []));

/** The tables an EXPLAIN (… FORMAT JSON) statement's plan reads whole. */
export async function seqScannedTables(client: Pick<pg.ClientBase, "query">, explain: string): Promise<(string | undefined)[]> {
  return seqScanned(await planNodes(client, explain));
}
