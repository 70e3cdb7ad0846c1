// lib/db/sql holds the one current definition of every function, trigger and view the product
// relies on, and the storage settings and single rows of its tables; the migrations are their
// history. This test holds the two together: a database made by the migrations must read, in the
// catalog, exactly as one whose objects were made from the definition files alone; and every
// object the migrations made must have its file.
import fs from "node:fs";
import path from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, setupTestDatabase, type TestDatabase } from "../../testing/db";

const DIR = import.meta.dirname;
/** Applied in this order: trigger files define their trigger functions; views read tables only. */
const FOLDERS = ["functions", "tables", "triggers", "views"] as const;

type Definition = { folder: (typeof FOLDERS)[number]; name: string; file: string; text: string };

function definitions(): Definition[] {
  return FOLDERS.flatMap((folder) =>
    fs
      .readdirSync(path.join(DIR, folder))
      .filter((f) => f.endsWith(".sql"))
      .sort()
      .map((f) => ({ folder, name: f.slice(0, -4), file: `${folder}/${f}`, text: fs.readFileSync(path.join(DIR, folder, f), "utf8") })),
  );
}

/** What a file creates: [kind, name] for each CREATE [OR REPLACE] FUNCTION / TRIGGER / VIEW. */
function created(text: string): [string, string][] {
  const code = text.replace(/--[^\n]*/g, "");
  return [...code.matchAll(/CREATE\s+(?:OR\s+REPLACE\s+)?(FUNCTION|TRIGGER|VIEW)\s+"?(\w+)"?/gi)].map((m) => [m[1].toLowerCase(), m[2]]);
}

type Queryable = Pick<pg.Pool, "query">;
const squeeze = (s: string) => s.replace(/\s+/g, " ").trim();

/** The catalog's own rendering of every object, whitespace folded: the form both databases are compared in. */
async function catalog(db: Queryable) {
  const rows = async (text: string) => Object.fromEntries((await db.query<{ name: string; def: string }>(text)).rows.map((r) => [r.name, squeeze(r.def)]));
  return {
    functions: await rows(`
      SELECT p.oid::regprocedure::text AS name, pg_get_functiondef(p.oid) AS def FROM pg_proc p
      WHERE p.pronamespace = 'public'::regnamespace
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')`),
    triggers: await rows(`
      SELECT t.tgname AS name, pg_get_triggerdef(t.oid) AS def FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE NOT t.tgisinternal AND c.relnamespace = 'public'::regnamespace`),
    views: await rows(`SELECT c.relname AS name, pg_get_viewdef(c.oid, true) AS def FROM pg_class c WHERE c.relkind IN ('v', 'm') AND c.relnamespace = 'public'::regnamespace`),
    storage: await rows(`
      SELECT c.relname AS name, array_to_string(ARRAY(SELECT o FROM unnest(c.reloptions) o ORDER BY o), ', ') AS def FROM pg_class c
      WHERE c.relkind IN ('r', 'p') AND c.relnamespace = 'public'::regnamespace AND c.reloptions IS NOT NULL`),
    rows: {
      sk_clock: JSON.stringify((await db.query("SELECT * FROM sk_clock ORDER BY id")).rows),
      cluster: JSON.stringify((await db.query("SELECT id, partitions FROM cluster ORDER BY id")).rows),
    },
  };
}

/**
 * Take out of a clone of the migrated database everything the definition files make: views,
 * triggers, every function nothing else depends on (a function an index uses stays, and its
 * file's CREATE OR REPLACE rewrites it), storage settings and the single rows.
 */
async function stripDefinedObjects(db: pg.Pool) {
  for (const { name } of (await db.query<{ name: string }>("SELECT c.oid::regclass::text AS name FROM pg_class c WHERE c.relkind = 'v' AND c.relnamespace = 'public'::regnamespace")).rows)
    await db.query(`DROP VIEW IF EXISTS ${name} CASCADE`);
  for (const { name, rel } of (
    await db.query<{ name: string; rel: string }>(
      "SELECT quote_ident(t.tgname) AS name, t.tgrelid::regclass::text AS rel FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal AND c.relnamespace = 'public'::regnamespace",
    )
  ).rows)
    await db.query(`DROP TRIGGER ${name} ON ${rel}`);
  const client = await db.connect();
  try {
    await client.query("BEGIN");
    for (const { sig } of (await client.query<{ sig: string }>("SELECT p.oid::regprocedure::text AS sig FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace")).rows) {
      await client.query("SAVEPOINT f");
      await client.query(`DROP FUNCTION ${sig}`).then(
        () => client.query("RELEASE SAVEPOINT f"),
        (err: { code?: string }) => {
          if (err.code !== "2BP01") throw err; // something (an index) depends on it: keep it
          return client.query("ROLLBACK TO SAVEPOINT f");
        },
      );
    }
    await client.query("COMMIT");
  } finally {
    client.release();
  }
  for (const { rel, opts } of (
    await db.query<{ rel: string; opts: string }>(
      "SELECT c.oid::regclass::text AS rel, string_agg(split_part(o, '=', 1), ', ') AS opts FROM pg_class c, unnest(c.reloptions) o WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace GROUP BY 1",
    )
  ).rows)
    await db.query(`ALTER TABLE ${rel} RESET (${opts})`);
  await db.query("DELETE FROM sk_clock");
  await db.query("DELETE FROM cluster");
}

const migrated = setupTestDatabase({ reset: false });
let fromFiles: TestDatabase;
beforeAll(async () => {
  fromFiles = await createTestDatabase({ poolSize: 2 });
  await stripDefinedObjects(fromFiles.pool);
  for (const d of definitions()) {
    await fromFiles.pool.query(d.text).catch((err: Error) => {
      throw new Error(`lib/db/sql/${d.file} does not apply: ${err.message}`, { cause: err });
    });
  }
});
afterAll(async () => {
  await fromFiles?.drop();
});

describe("lib/db/sql", () => {
  it("names each file for the one object it defines", () => {
    const kindOf = { functions: "function", triggers: "trigger", views: "view" } as const;
    for (const d of definitions()) {
      const made = created(d.text);
      if (d.folder === "tables") {
        expect(made, d.file).toEqual([]);
        expect(d.text, `${d.file} is about table ${d.name}`).toMatch(new RegExp(`(ALTER TABLE|INSERT INTO) "?${d.name}"?\\b`));
        continue;
      }
      const kind = kindOf[d.folder];
      expect(made.filter(([k]) => k === kind).map(([, n]) => n), `${d.file} defines the ${kind} it is named for, and no other`).toEqual([d.name]);
      // A trigger's file also holds its trigger function, and nothing else.
      if (d.folder === "triggers") expect(made.filter(([k]) => k !== "trigger").map(([k]) => k), d.file).toEqual(made.length > 1 ? ["function"] : []);
      else expect(made, d.file).toHaveLength(1);
    }
  });

  it("has a definition file for every function, trigger and view the migrations make, and only one", async () => {
    const defined = new Map<string, string[]>();
    for (const d of definitions()) for (const [kind, name] of created(d.text)) defined.set(`${kind} ${name}`, [...(defined.get(`${kind} ${name}`) ?? []), d.file]);
    const { rows } = await migrated.pool.query<{ key: string }>(`
      SELECT 'function ' || p.proname AS key FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
      UNION ALL SELECT 'trigger ' || t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal AND c.relnamespace = 'public'::regnamespace
      UNION ALL SELECT 'view ' || c.relname FROM pg_class c WHERE c.relkind IN ('v', 'm') AND c.relnamespace = 'public'::regnamespace`);
    expect(rows.length).toBeGreaterThan(0);
    const missing = rows.map((r) => r.key).filter((k) => !defined.has(k));
    expect(missing, "objects the migrations make with no file in lib/db/sql (add one: see lib/db/sql/README.md)").toEqual([]);
    for (const [key, files] of defined) expect(files, `${key} is defined once`).toHaveLength(1);
  });

  it("makes, from the files alone, the objects a freshly migrated database has", async () => {
    const want = await catalog(migrated.pool);
    const got = await catalog(fromFiles.pool);
    const differences: string[] = [];
    for (const kind of ["functions", "triggers", "views", "storage", "rows"] as const) {
      const w = want[kind] as Record<string, string>;
      const g = got[kind] as Record<string, string>;
      for (const name of new Set([...Object.keys(w), ...Object.keys(g)])) {
        if (w[name] === g[name]) continue;
        if (w[name] === undefined) differences.push(`${kind} ${name}: made by lib/db/sql, not by the migrations`);
        else if (g[name] === undefined) differences.push(`${kind} ${name}: made by the migrations, not by lib/db/sql`);
        else differences.push(`${kind} ${name}: ${firstDifference(w[name], g[name])}`);
      }
    }
    expect(differences, "lib/db/sql against a freshly migrated database").toEqual([]);
  });
});

/** Where two renderings part, with some context: "migrated …X… / lib/db/sql …Y…". */
function firstDifference(migratedDef: string, fileDef: string): string {
  let i = 0;
  while (i < migratedDef.length && migratedDef[i] === fileDef[i]) i++;
  const at = (s: string) => `…${s.slice(Math.max(0, i - 40), i + 40)}…`;
  return `migrated ${at(migratedDef)} / lib/db/sql ${at(fileDef)}`;
}
