import type pg from "pg";

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; Plans?: PlanNode[] };

function* nodes(n: PlanNode): Generator<PlanNode> {
  yield n;
  for (const c of n.Plans ?? []) yield* nodes(c);
}

/** The tables an EXPLAIN (… FORMAT JSON) statement's plan reads whole (its Seq Scan nodes). */
export async function seqScannedTables(client: Pick<pg.ClientBase, "query">, explain: string): Promise<(string | undefined)[]> {
  const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(explain);
  return [...nodes(rows[0]["QUERY PLAN"][0].Plan)].filter((n) => n["Node Type"] === "Seq Scan").map((n) => n["Relation Name"]);
}

/** The indexes an EXPLAIN (… FORMAT JSON) statement's plan walks (its index and index-only scans, bitmap index scans). */
export async function indexesWalked(client: Pick<pg.ClientBase, "query">, explain: string): Promise<string[]> {
  const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(explain);
  return [...nodes(rows[0]["QUERY PLAN"][0].Plan)].flatMap((n) => (n["Index Name"] ? [n["Index Name"]] : []));
}
