import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchorsOf, checkManualFile, headingSlug, manualFiles, repositoryFiles } from "./docs-check";

const root = path.resolve(import.meta.dirname, "..");
const read = (rel: string) => fs.readFileSync(path.join(root, rel), "utf8");
const repoFiles = repositoryFiles(root);

describe("the manual (README.md and docs/)", () => {
  it("names only links, anchors and repository paths that exist", () => {
    const problems = manualFiles(root).flatMap((f) => checkManualFile(root, f, repoFiles));
    expect(problems.map((p) => `${p.file}:${p.line}: ${p.what}`)).toEqual([]);
  });

  it("keeps the README an entry point that shows both commands", () => {
    const readme = read("README.md");
    expect(readme.split("\n").length).toBeLessThanOrEqual(400);
    expect(readme).toContain("npm install && npm start");
    expect(readme).toContain("npm install && npm test");
  });

  it("describes the product, not the history of its making, nor this machine", () => {
    for (const f of manualFiles(root)) {
      const text = read(f);
      expect(text, f).not.toMatch(/\bsession [0-9]+\b|\b(first|second|third|fourth|fifth|sixth) session\b/i);
      expect(text, f).not.toMatch(/\/work\/|\/root\//);
    }
  });

  it("lists every environment variable the code reads in the configuration table, and no other", () => {
    // What the product and its tools read; tests and their helpers only set variables for the processes they start.
    const testCode = (f: string) => /\.(test|spec)\.tsx?$/.test(f) || /^(e2e|lib\/testing|worker\/testing)\//.test(f);
    const sources = repoFiles.filter((f) => (/\.(ts|tsx|mts|mjs)$/.test(f) && !testCode(f)) || f === ".ci/run");
    const read_ = new Set<string>();
    for (const f of sources) for (const m of read(f).matchAll(/\bSLOTKEEPER_[A-Z0-9_]+\b/g)) read_.add(m[0]);
    // The settings parsed by zod without the prefix: keys of the environment schemas.
    for (const f of ["lib/config.ts", "lib/auth/settings.ts"]) for (const m of read(f).matchAll(/^\s+([A-Z][A-Z0-9_]+): z\./gm)) read_.add(m[1]);
    expect(read_.size).toBeGreaterThan(20);
    const operations = read("docs/operations.md");
    const documented = new Set([...operations.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
    expect([...read_].filter((v) => !documented.has(v)).sort(), "read by the code, missing from docs/operations.md").toEqual([]);
    const named = new Set(manualFiles(root).flatMap((f) => [...read(f).matchAll(/\bSLOTKEEPER_[A-Z0-9_]+\b/g)].map((m) => m[0])));
    expect([...named].filter((v) => !read_.has(v)).sort(), "named by the manual, read by no code").toEqual([]);
  });

  it("says why each dependency in package.json is there", () => {
    const pkg = JSON.parse(read("package.json")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const development = read("docs/development.md");
    const table = development.slice(development.indexOf("## Dependencies and why"));
    const explained = new Set([...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1].matchAll(/`([^`]+)`/g)].map((x) => x[1])));
    const all = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)];
    expect(all.filter((d) => !explained.has(d)).sort()).toEqual([]);
    expect([...explained].filter((d) => !all.includes(d)).sort(), "explained but not a dependency").toEqual([]);
  });
});

describe("the manual's checker", () => {
  const fake = fs.mkdtempSync(path.join(os.tmpdir(), "sk-docs-check-"));
  afterAll(() => fs.rmSync(fake, { recursive: true, force: true }));
  const files = ["README.md", "docs/guide.md", "lib/runs/claim/plain.ts", "drizzle/0006_run_queue.sql", ".ci/run"];
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(fake, rel)), { recursive: true });
    fs.writeFileSync(path.join(fake, rel), text);
  };
  write("docs/guide.md", "# Guide\n\n## The hot path's shape\n\n## Where a run lives\n");
  for (const f of files.slice(2)) write(f, "");

  const problemsOf = (markdown: string) => {
    write("README.md", markdown);
    return checkManualFile(fake, "README.md", files).map((p) => p.what);
  };

  it("reports a file that was renamed or moved", () => {
    expect(problemsOf("The claim is in `lib/runs/claim.ts`.")).toEqual(["`lib/runs/claim.ts` names lib/runs/claim.ts, which is not in the repository"]);
    expect(problemsOf("See `0007_rescue_gate.sql`.")).toHaveLength(1);
    expect(problemsOf("See [the guide](docs/gude.md).")).toEqual(["link docs/gude.md: docs/gude.md does not exist"]);
  });

  it("reports a link to a heading that is not there", () => {
    expect(problemsOf("[shape](docs/guide.md#the-hot-paths-shape) [where](docs/guide.md#where-a-run-lives)")).toEqual([]);
    expect(problemsOf("[shape](docs/guide.md#the-hot-path)")).toEqual(["link docs/guide.md#the-hot-path: docs/guide.md has no heading #the-hot-path"]);
  });

  it("accepts paths, folders and bare names that exist", () => {
    expect(problemsOf("`lib/runs/claim/plain.ts`, `lib/runs/claim/`, `lib/runs`, `.ci/run`, `0006_run_queue.sql`, `drizzle/0006_run_queue.sql`.")).toEqual([]);
  });

  it("leaves alone what is not one repository path", () => {
    const prose = [
      "`application/json`", "`/api/runs/{id}`", "`worker/loops/<name>.ts`", "`*.alone.test.ts`", "`app/api/**/route.ts`",
      "`.slotkeeper/pgdata`", "`e2e/output/stack.json`", "`https://example.test/a.ts`", "`SLOTKEEPER_PUBLIC_URL/schedules/<name>`",
      "`report.json`", "`0 * * * *`", "`ctx.signal`",
    ].join(" ");
    expect(problemsOf(prose)).toEqual([]);
    expect(problemsOf("```sh\ncat lib/nothing/here.ts\n```\n")).toEqual([]);
  });

  it("reports a name said to be in a file that no longer has it", () => {
    write("lib/runs/claim/plain.ts", "export function claimPlain() {}\n");
    expect(problemsOf("The claim (`claimPlain` in `lib/runs/claim/plain.ts`, also `claimPlain()` in `lib/runs/claim/plain.ts`).")).toEqual([]);
    expect(problemsOf("The sweep (`sweepUnheld` in `lib/runs/claim/plain.ts`).")).toEqual(["`sweepUnheld` in `lib/runs/claim/plain.ts`: lib/runs/claim/plain.ts has no sweepUnheld"]);
    // Wrapped onto the next line, as prose is.
    expect(problemsOf("Reached by the sweep (`sweepUnheld` in\n`lib/runs/claim/plain.ts`).").map((p) => p.split(":")[0])).toEqual(["`sweepUnheld` in `lib/runs/claim/plain.ts`"]);
    // A prefix of a name is not the name.
    expect(problemsOf("`claim` in `lib/runs/claim/plain.ts`")).toHaveLength(1);
  });

  it("makes the anchors GitHub makes", () => {
    expect(headingSlug("The hot path's shape")).toBe("the-hot-paths-shape");
    expect(headingSlug("Retries, backoff and dead runs")).toBe("retries-backoff-and-dead-runs");
    expect(headingSlug("`run_status` and `run_attempts`")).toBe("run_status-and-run_attempts");
    expect([...anchorsOf("# A\n## Notes\n## Notes\n")]).toEqual(["a", "notes", "notes-1"]);
  });
});
