/**
 * A schedules file: `{ schedules: [body, …] }` in YAML or JSON, each body checked with the same
 * zod input and defaults as POST /api/schedules (lib/schedules/input.ts). The first error stops
 * the parse and names the entry and its field (`schedules[2].cron`, with the name when known).
 */
import { parse as parseYaml } from "yaml";
import { AppError } from "../../errors";
import { parseScheduleInput, type ParseOptions } from "../input";
import { specOfInput, type ScheduleSpec } from "./spec";

/** An error about entry `i` of the file: field `schedules[i].<field>`, the message naming the schedule. */
export function entryError(i: number, name: string | undefined, err: unknown): unknown {
  if (!(err instanceof AppError)) return err;
  const at = `schedules[${i}]`;
  const field = !err.field || err.field === "body" ? at : `${at}.${err.field}`;
  return new AppError(err.kind, `${field}${name ? ` ("${name}")` : ""}: ${err.message}`, field, { cause: err });
}

/** Read the text of a file (YAML, of which JSON is a part) into a value. */
export function readDocumentText(text: string): unknown {
  try {
    return parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 });
  } catch (err) {
    throw new AppError("invalid", `the document is neither valid YAML nor JSON: ${(err as Error).message}`, "document");
  }
}

/** Check a file's value: the list of specs, or an AppError naming the entry and field. */
export function parseScheduleDocument(doc: unknown, opts: ParseOptions = {}): ScheduleSpec[] {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new AppError("invalid", "the document must be an object with a schedules list", "document");
  const extra = Object.keys(doc).find((k) => k !== "schedules");
  if (extra !== undefined) throw new AppError("invalid", `unknown field "${extra}" (a document holds only schedules)`, extra);
  const list = (doc as { schedules?: unknown }).schedules;
  if (!Array.isArray(list)) throw new AppError("invalid", "schedules must be a list of schedule bodies", "schedules");
  const seen = new Map<string, number>();
  return list.map((body, i) => {
    const name = typeof (body as { name?: unknown })?.name === "string" ? (body as { name: string }).name : undefined;
    let spec: ScheduleSpec;
    try {
      spec = specOfInput(parseScheduleInput(body, "create", opts));
    } catch (err) {
      throw entryError(i, name, err);
    }
    const first = seen.get(spec.name);
    if (first !== undefined) throw new AppError("invalid", `schedules[${i}].name ("${spec.name}"): listed twice (also schedules[${first}])`, `schedules[${i}].name`);
    seen.set(spec.name, i);
    return spec;
  });
}
