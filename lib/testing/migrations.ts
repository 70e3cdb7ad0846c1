import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { migrationsFolder } from "../db/migrate";

type Journal = { entries: { tag: string }[] };

const journal = (): Journal => JSON.parse(fs.readFileSync(path.join(migrationsFolder, "meta/_journal.json"), "utf8")) as Journal;

/** The position of migration `tag` in the journal: `firstMigrations(indexOfMigration(t))` stops just before it. */
export function indexOfMigration(tag: string): number {
  const i = journal().entries.findIndex((e) => e.tag === tag);
  expect(i, `migration ${tag} in the journal`).toBeGreaterThanOrEqual(0);
  return i;
}

/** A migrations folder holding only the first `n` entries of the journal. */
export function firstMigrations(n: number): string {
  const full = journal();
  expect(full.entries.length).toBeGreaterThanOrEqual(n);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotkeeper-upgrade-"));
  fs.mkdirSync(path.join(dir, "meta"));
  const entries = full.entries.slice(0, n);
  fs.writeFileSync(path.join(dir, "meta/_journal.json"), JSON.stringify({ ...full, entries }));
  for (const e of entries) fs.copyFileSync(path.join(migrationsFolder, `${e.tag}.sql`), path.join(dir, `${e.tag}.sql`));
  return dir;
}
