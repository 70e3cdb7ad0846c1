import { beforeAll, describe, expect, it } from "vitest";
import { setupTestDatabase } from "../testing/db";
import { PgDialect } from "drizzle-orm/pg-core";
import { rarestPart, searchCandidates, termParts } from "./search-probe";

const t = setupTestDatabase({ reset: false });

beforeAll(async () => {
  // 3,000 schedules job-00001…; descriptions by i % 7: "alpha beta" (0–3), "beta gamma" (4, 5),
  // "gamma alpha" (6); one in 1,000 (i % 1000 = 7) "the needle job". ANALYZE gives the planner
  // the statistics the probe is chosen by.
  await t.pool.query(
    `INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition, description)
     SELECT 'job-' || lpad(i::text, 5, '0'), 'noop', 60, sk_now(), 0,
       CASE WHEN i % 1000 = 7 THEN 'the needle job' WHEN i % 7 < 4 THEN 'alpha beta' WHEN i % 7 < 6 THEN 'beta gamma' ELSE 'gamma alpha' END
     FROM generate_series(1, 3000) i`,
  );
  await t.pool.query("ANALYZE schedule_search");
}, 60_000);

describe("termParts", () => {
  it("is each word of three or more characters with the separator either side, longest first, and nothing for a term of one such word", () => {
    expect(termParts("spread-800000")).toEqual(["spread-", "-800000"]);
    expect(termParts("the needle job")).toEqual([" needle ", "the ", " job"]);
    expect(termParts("a-b-spread-cd")).toEqual([]);
    expect(termParts("report")).toEqual([]);
    expect(termParts("été-nuit_1234")).toEqual(["-nuit_", "_1234", "été-"]);
    expect(termParts("one two three four five")).toEqual([" three ", " four ", " two ", " five"]);
  });
});

describe("rarestPart", () => {
  it("probes with a word no row is expected to hold rather than with the words every row holds", async () => {
    expect(await rarestPart(t.db, "job-00012")).toBe("-00012");
    expect(await rarestPart(t.db, "the needle job")).toBe(" needle ");
  });

  it("probes with the whole term when each word is common and only the term is rare", async () => {
    expect(await rarestPart(t.db, "alpha gamma")).toBe("alpha gamma");
  });

  it("probes with a term of one word as it is", async () => {
    expect(await rarestPart(t.db, "gamma")).toBe("gamma");
    expect(await rarestPart(t.db, "%_\\")).toBe("%_\\");
  });
});

describe("searchCandidates", () => {
  const text = async (term: string, max: number) => new PgDialect().sqlToQuery(await searchCandidates(t.db, term, max));
  const ids = async (term: string) =>
    (await t.pool.query<{ id: string }>(`SELECT id FROM schedules WHERE name ILIKE $1 ORDER BY id`, [`%${term}%`])).rows.map((r) => Number(r.id));

  it("are the rows of the rarest word when it holds no more than the cap, else the rows holding the whole term", async () => {
    // "-0001" is in job-00010 … job-00019: ten rows.
    const few = await text("job-0001", 10);
    expect(few.sql).toContain("= ANY(");
    expect([...(few.params[0] as number[])].sort((a, b) => a - b)).toEqual(await ids("job-0001"));
    const many = await text("job-0001", 9);
    expect(many.sql).toContain("ILIKE '%job-0001%'");
    expect(many.params).toEqual([]);
  });
});
