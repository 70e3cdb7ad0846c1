/** The body of POST /api/apply: `{ source, prune?, dryRun?, document: text }` or `{ source, prune?, dryRun?, schedules: [...] }`. */
import { AppError } from "../../errors";
import type { ParseOptions } from "../input";
import { parseScheduleDocument, readDocumentText } from "./document";
import type { ApplyOptions } from "./apply";
import type { ScheduleSpec } from "./spec";

const KNOWN = new Set(["source", "prune", "dryRun", "document", "schedules"]);

export function parseApplyRequest(body: unknown, opts: ParseOptions = {}): { specs: ScheduleSpec[]; options: ApplyOptions } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new AppError("invalid", "the body must be a JSON object", "body");
  const b = body as Record<string, unknown>;
  const extra = Object.keys(b).find((k) => !KNOWN.has(k));
  if (extra !== undefined) throw new AppError("invalid", `unknown field "${extra}"`, extra);
  if (typeof b.source !== "string" || !b.source.trim() || b.source.length > 200) throw new AppError("invalid", "source must be a name of 1 to 200 characters (the CLI uses the file's base name)", "source");
  for (const f of ["prune", "dryRun"] as const) if (b[f] !== undefined && typeof b[f] !== "boolean") throw new AppError("invalid", `${f} must be true or false`, f);
  if ((b.document === undefined) === (b.schedules === undefined)) throw new AppError("invalid", "give either document (YAML or JSON text) or schedules (a list), not both", "document");
  let doc: unknown;
  if (b.document !== undefined) {
    if (typeof b.document !== "string") throw new AppError("invalid", "document must be the text of a YAML or JSON file", "document");
    doc = readDocumentText(b.document);
  } else doc = { schedules: b.schedules };
  return { specs: parseScheduleDocument(doc, opts), options: { source: b.source.trim(), prune: b.prune === true, dryRun: b.dryRun === true } };
}
