// What `scripts/docs.test.ts` checks in the manual (README.md and docs/*.md): that every relative
// link, every anchor and every repository path it names resolves, so a renamed or moved file breaks
// the build instead of the docs.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** The manual: README.md and every Markdown file in docs/, as repository-relative paths. */
export function manualFiles(root: string): string[] {
  const docs = fs.existsSync(path.join(root, "docs")) ? fs.readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md")).sort() : [];
  return ["README.md", ...docs.map((f) => `docs/${f}`)];
}

/**
 * Code spans that name something outside the repository although they look like paths: places the
 * running product writes to, paths of other projects, and paths of this machine.
 */
export const NOT_REPOSITORY_PATHS: readonly string[] = [
  ".slotkeeper/", // local state: the embedded cluster, test results, chaos reports (gitignored)
  "e2e/output/", // Playwright's output (gitignored)
  "src/sql/getJobs.ts", // graphile-worker's claim statement, cited as a peer
  "report.json", // the chaos report, written under .slotkeeper/chaos/<run>/
];

/** File endings that make a bare code span (no slash) a file name to look for. */
const FILE_ENDINGS = /\.(ts|tsx|mts|mjs|js|json|sql|yml|yaml|md|css|png)$/;

/** Characters that make a code span a pattern, a placeholder or code rather than one path. */
const NOT_ONE_PATH = /[\s*<>{}…=:()'"`$,|?&]/;

export type Problem = { file: string; line: number; what: string };

/** `[text](target)` and `![alt](target)` outside fenced code blocks, with their line numbers. */
export function linksIn(markdown: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  forEachProseLine(markdown, (text, line) => {
    for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1], line });
  });
  return out;
}

/** Inline code spans outside fenced code blocks, with their line numbers. */
export function codeSpansIn(markdown: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  forEachProseLine(markdown, (text, line) => {
    for (const m of text.matchAll(/(`+)([^`]+?)\1(?!`)/g)) out.push({ text: m[2].trim(), line });
  });
  return out;
}

function forEachProseLine(markdown: string, fn: (text: string, line: number) => void): void {
  let fenced = false;
  markdown.split("\n").forEach((text, i) => {
    if (/^\s*(```|~~~)/.test(text)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) fn(text, i + 1);
  });
}

/**
 * "`name` in `path`" outside fenced code blocks: the manual saying where a function, constant or
 * type is defined (`sweptHandlers` in `lib/runs/claim/index.ts`), with their line numbers. A name
 * is one identifier, optionally written as a call (`claimPlain()`).
 */
export function namesInFilesIn(markdown: string): { name: string; target: string; line: number }[] {
  // The prose with fenced blocks blanked (line numbers kept), so a phrase wrapped onto the next line is found.
  const lines = markdown.split("\n").map(() => "");
  forEachProseLine(markdown, (text, line) => (lines[line - 1] = text));
  const prose = lines.join("\n");
  return [...prose.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)(?:\(\))?`\s+in\s+`([^`\n]+)`/g)].map((m) => ({
    name: m[1],
    target: m[2].trim(),
    line: prose.slice(0, m.index).split("\n").length,
  }));
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a Markdown file offers (repeated headings get -1, -2, … as on GitHub). */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  forEachProseLine(markdown, (text) => {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(text);
    if (!m) return;
    const base = headingSlug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  });
  return anchors;
}

/**
 * The repository path a code span names, or null when it names none: a span with a slash whose
 * first segment is a top-level entry of the repository, or that ends like a file or a folder; or a
 * bare file name with a known ending. Patterns, placeholders, URLs, API routes (`/api/…`) and
 * content types are not paths.
 */
export function pathInSpan(span: string, topLevel: ReadonlySet<string>): string | null {
  const s = span.replace(/[.,;]$/, "");
  if (!s || NOT_ONE_PATH.test(s) || s.startsWith("/") || /^[a-z][a-z0-9+.-]*:\/\//i.test(s)) return null;
  if (NOT_REPOSITORY_PATHS.some((p) => s === p || (p.endsWith("/") && s.startsWith(p)))) return null;
  if (s.includes("/")) {
    if (!/^[\w.@[\]-]+(\/[\w.@[\]-]+)*\/?$/.test(s)) return null;
    const first = s.split("/")[0];
    return topLevel.has(first) || FILE_ENDINGS.test(s) || s.endsWith("/") ? s : null;
  }
  return FILE_ENDINGS.test(s) && /^[\w.@-]+$/.test(s) ? s : null;
}

/**
 * The repository's files as relative paths: what git tracks plus new files it does not ignore
 * (so a file being added counts, and build output or local state does not), that exist on disk.
 */
export function repositoryFiles(root: string): string[] {
  const listed = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return listed.split("\0").filter((f) => f && fs.existsSync(path.join(root, f)));
}

/** The problems of one file of the manual, given the repository's files (relative paths). */
export function checkManualFile(root: string, file: string, repoFiles: readonly string[]): Problem[] {
  const problems: Problem[] = [];
  const text = fs.readFileSync(path.join(root, file), "utf8");
  const dir = path.posix.dirname(file);
  const topLevel = new Set(repoFiles.map((f) => f.split("/")[0]));
  const basenames = new Set(repoFiles.map((f) => path.posix.basename(f)));
  const files = new Set(repoFiles);
  const folders = new Set(repoFiles.flatMap((f) => f.split("/").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("/"))));
  const exists = (rel: string) => files.has(rel) || folders.has(rel);
  // A package's name can look like a file (`ipaddr.js`); the dependencies are named, not paths.
  const pkgFile = path.join(root, "package.json");
  const pkg = (fs.existsSync(pkgFile) ? JSON.parse(fs.readFileSync(pkgFile, "utf8")) : {}) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
  const packages = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})]);

  for (const { target, line } of linksIn(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [rawPath, anchor] = target.split("#", 2);
    const rel = rawPath ? path.posix.normalize(path.posix.join(dir, decodeURIComponent(rawPath))) : file;
    if (rel.startsWith("..")) {
      problems.push({ file, line, what: `link ${target} leaves the repository` });
      continue;
    }
    if (!exists(rel)) {
      problems.push({ file, line, what: `link ${target}: ${rel} does not exist` });
      continue;
    }
    if (anchor !== undefined && rel.endsWith(".md") && !anchorsOf(fs.readFileSync(path.join(root, rel), "utf8")).has(anchor)) {
      problems.push({ file, line, what: `link ${target}: ${rel} has no heading #${anchor}` });
    }
  }

  for (const { text: span, line } of codeSpansIn(text)) {
    const p = pathInSpan(span, topLevel);
    if (p === null || packages.has(span)) continue;
    const found = p.includes("/") ? exists(p.replace(/\/$/, "")) : basenames.has(p);
    if (!found) problems.push({ file, line, what: `\`${span}\` names ${p}, which is not in the repository` });
  }

  // A name said to be in a file must still be there: a renamed or removed function breaks the build.
  for (const { name, target, line } of namesInFilesIn(text)) {
    const p = pathInSpan(target, topLevel)?.replace(/\/$/, "");
    if (!p || !files.has(p)) continue; // not a path, or a missing one (reported above)
    if (!new RegExp(`\\b${name}\\b`).test(fs.readFileSync(path.join(root, p), "utf8"))) problems.push({ file, line, what: `\`${name}\` in \`${target}\`: ${p} has no ${name}` });
  }
  return problems;
}
