// What the CLI prints: aligned tables and key–value blocks for people, the API's JSON for scripts
// (--json), and errors on stderr.

/** Where a command writes; the tests and main.ts pass process.stdout/stderr. */
export type Output = { out: (text: string) => void; err: (text: string) => void; json: boolean };

export type Column<T> = { header: string; value: (row: T) => unknown; align?: "left" | "right" };

/** The longest a table cell gets before it is cut with "…" (errors and descriptions run long). */
export const MAX_CELL = 60;

/** One cell as text: dashes for nothing, instants as they came (ISO, UTC), lists joined. */
export function cell(v: unknown): string {
  if (v === null || v === undefined || v === "") return "-";
  if (Array.isArray(v)) return v.length ? v.map(cell).join(",") : "-";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v).replace(/\s+/g, " ");
}

const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** Rows under a header, columns padded to their widest cell, two spaces apart; no trailing spaces. */
export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((r) => columns.map((c) => cut(cell(c.value(r)), MAX_CELL)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (columns[i].align === "right" ? v.padStart(widths[i]) : v.padEnd(widths[i])))
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join("\n");
}

/** `key: value` lines, keys padded to one width. */
export function keyValues(pairs: [string, unknown][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${cell(v)}`).join("\n");
}

/** Print a command's answer: the JSON as the API gave it with --json, else the human text. */
export function show(o: Output, data: unknown, human: () => string): void {
  o.out(o.json ? JSON.stringify(data, null, 2) : human());
}

/** A timing in words: the cron expression and its zone, or the interval. */
export function timing(s: { cron: string | null; everySeconds: number | null; timezone: string }): string {
  if (s.cron) return s.timezone === "UTC" ? s.cron : `${s.cron} (${s.timezone})`;
  return s.everySeconds ? `every ${s.everySeconds}s` : "-";
}
