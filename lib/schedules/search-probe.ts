/**
 * A schedule search matches the schedules whose name, handler or description contains the term,
 * case-insensitively (`ILIKE '%term%'`). The list reads candidates from the trigram index of
 * schedule_search and checks the rule on each (lib/schedules/list.ts). Wherever the term is
 * contained, so is every part of it: the candidates may come from a part of the term and the rule
 * still decides, so which part is a question of cost alone, answered here.
 *
 * Why a part: a GIN scan takes the rows of the probe's rarest trigram and looks each one up in the
 * posting tree of every other trigram. A term with a common word (`spread-800000`, where `spread`
 * is in most names) pays for the common word's trigrams on every candidate, and when the
 * candidates are few and far apart each lookup descends the tree afresh: several times the work of
 * probing with `-800000` alone (docs/benchmarks.md, "What the search costs"). But a part also finds
 * more candidates than the term, each read and checked: `-123` names ten times the schedules
 * `hourly-123` does. So the part the planner estimates rarest (from the statistics ANALYZE keeps)
 * is read first, at most PROBE_MAX_CANDIDATES rows of it; if it holds no more, those rows are the
 * candidates, and otherwise the whole term is probed, as it is when no word is estimated rarer than
 * the term (`hourly-spread`: each word common, the term rare).
 */
import { sql, type SQL } from "drizzle-orm";
import { escapeLiteral } from "pg";
import type { Db } from "../db/client";

/** `%term%` for ILIKE, the term's own `\`, `%` and `_` taken literally. */
export function containsPattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The pattern as an SQL literal (see lib/schedules/list.ts for why a literal, not a parameter). */
export function patternLiteral(term: string) {
  return sql.raw(escapeLiteral(containsPattern(term)));
}

/** A word as the trigram index splits text: a run of letters and digits. */
const WORD = /[\p{L}\p{N}]+/gu;

/** Shorter words give the index too few trigrams to narrow anything down. */
export const PROBE_MIN_WORD = 3;

/** Words weighed at most (the longest): each costs the planner one estimate. */
export const PROBE_MAX_WORDS = 4;

/**
 * The parts of `term` worth weighing against it: each word of at least PROBE_MIN_WORD characters,
 * with the separator either side of it (a separator tells the index where the word starts or ends,
 * which narrows its trigrams). None when the term has fewer than two such words.
 */
export function termParts(term: string): string[] {
  const parts: string[] = [];
  for (const m of term.matchAll(WORD)) {
    if (m[0].length < PROBE_MIN_WORD) continue;
    parts.push(term.slice(Math.max(0, m.index - 1), Math.min(term.length, m.index + m[0].length + 1)));
  }
  if (parts.length < 2) return [];
  return parts.sort((a, b) => b.length - a.length).slice(0, PROBE_MAX_WORDS);
}

/** How many rows of schedule_search the planner expects to contain `part`. */
async function estimatedMatches(db: Pick<Db, "execute">, part: string): Promise<number> {
  const r = await db.execute<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }>(
    sql`EXPLAIN (FORMAT JSON) SELECT 1 FROM schedule_search WHERE text ILIKE ${patternLiteral(part)}`,
  );
  return r.rows[0]["QUERY PLAN"][0].Plan["Plan Rows"];
}

/** The most candidates read from a word of the term before the whole term is probed instead. */
export const PROBE_MAX_CANDIDATES = 2_000;

/** The part of `term` the planner expects the fewest rows to hold: the term itself or one of its words. */
export async function rarestPart(db: Pick<Db, "execute">, term: string): Promise<string> {
  const parts = termParts(term);
  if (parts.length === 0) return term;
  let best = term;
  let bestRows = await estimatedMatches(db, term);
  for (const part of parts) {
    const rows = await estimatedMatches(db, part);
    // As rare as the whole term (both at the planner's floor, typically): the word has fewer
    // trigrams to look up, and its candidates are counted before they are used; among words, the
    // earlier one is the longer and so the narrower.
    if (rows < bestRows || (rows === bestRows && best === term)) {
      best = part;
      bestRows = rows;
    }
  }
  return best;
}

/**
 * The condition on a schedule `s` that keeps every schedule matching `term` and few others: its id
 * among those the rarest word of the term holds, when they are at most PROBE_MAX_CANDIDATES, or
 * else its row of schedule_search holding the term. The caller still checks the term itself.
 */
export async function searchCandidates(db: Pick<Db, "execute">, term: string, maxCandidates = PROBE_MAX_CANDIDATES): Promise<SQL> {
  const part = await rarestPart(db, term);
  if (part !== term) {
    const r = await db.execute<{ schedule_id: number | string }>(
      sql`SELECT schedule_id FROM schedule_search WHERE text ILIKE ${patternLiteral(part)} LIMIT ${maxCandidates + 1}`,
    );
    if (r.rows.length <= maxCandidates) return sql`s.id = ANY(${sql.param(r.rows.map((x) => Number(x.schedule_id)))}::bigint[])`;
  }
  return sql`s.id IN (SELECT ss.schedule_id FROM schedule_search ss WHERE ss.text ILIKE ${patternLiteral(term)})`;
}
