/**
 * The schedule form's values (strings, as inputs hold them) and their mapping to the API body.
 * Validation is the API's own: `parseScheduleInput` from lib/schedules/input.ts, run per field
 * while typing (as a one-field patch) and on the whole body before saving.
 */
import { AppError } from "../errors";
import { SCHEDULE_DEFAULTS } from "../schedules/defaults";
import { parseScheduleInput } from "../schedules/input";
import type { Schedule } from "./schedules";

export type FormValues = {
  name: string;
  description: string;
  handler: string;
  payload: string;
  timingKind: "cron" | "interval";
  cron: string;
  everySeconds: string;
  timezone: string;
  catchUp: "skip" | "latest" | "all";
  maxLatenessSeconds: string;
  jitterSeconds: string;
  overlap: "allow" | "forbid" | "skip";
  retryMaxAttempts: string;
  retryBaseSeconds: string;
  retryCapSeconds: string;
  leaseSeconds: string;
  /** Health-rule overrides; "" means the default rule. */
  lateAfterSeconds: string;
  lateGraceSeconds: string;
  backlogAfterSeconds: string;
  enabled: boolean;
  /** Tags separated by commas or spaces. */
  tags: string;
  /** "" means nobody. */
  owner: string;
  /** "" means no attempt timeout. */
  timeoutSeconds: string;
  /** The queue its runs wait in. */
  queue: string;
  /** "" means no limit. */
  maxConcurrent: string;
};

/** Field errors keyed by the API's field path ("cron", "retry.capSeconds", …); "form" for the rest. */
export type FieldErrors = Partial<Record<string, string>>;

/**
 * A new schedule's form: the schedule defaults (lib/schedules/defaults.ts, the same the API fills
 * in), plus suggestions for what has no default (a handler and a timing to start from).
 */
export const DEFAULT_VALUES: FormValues = {
  name: "",
  description: SCHEDULE_DEFAULTS.description,
  handler: "noop",
  payload: JSON.stringify(SCHEDULE_DEFAULTS.payload),
  timingKind: "cron",
  cron: "*/15 * * * *",
  everySeconds: "300",
  timezone: SCHEDULE_DEFAULTS.timezone,
  catchUp: SCHEDULE_DEFAULTS.catchUp,
  maxLatenessSeconds: SCHEDULE_DEFAULTS.maxLatenessSeconds ?? "",
  jitterSeconds: String(SCHEDULE_DEFAULTS.jitterSeconds),
  overlap: SCHEDULE_DEFAULTS.overlap,
  retryMaxAttempts: String(SCHEDULE_DEFAULTS.retry.maxAttempts),
  retryBaseSeconds: String(SCHEDULE_DEFAULTS.retry.baseSeconds),
  retryCapSeconds: String(SCHEDULE_DEFAULTS.retry.capSeconds),
  leaseSeconds: String(SCHEDULE_DEFAULTS.leaseSeconds),
  lateAfterSeconds: "",
  lateGraceSeconds: "",
  backlogAfterSeconds: "",
  enabled: SCHEDULE_DEFAULTS.enabled,
  tags: SCHEDULE_DEFAULTS.tags.join(", "),
  owner: SCHEDULE_DEFAULTS.owner ?? "",
  timeoutSeconds: SCHEDULE_DEFAULTS.timeoutSeconds ?? "",
  queue: SCHEDULE_DEFAULTS.queue,
  maxConcurrent: "",
};

/** The form's starting values for an existing schedule. */
export function valuesFromSchedule(s: Schedule): FormValues {
  return {
    name: s.name,
    description: s.description ?? "",
    handler: s.handler,
    payload: JSON.stringify(s.payload ?? {}, null, 2),
    timingKind: s.cron ? "cron" : "interval",
    cron: s.cron ?? DEFAULT_VALUES.cron,
    everySeconds: String(s.everySeconds ?? DEFAULT_VALUES.everySeconds),
    timezone: s.timezone,
    catchUp: s.catchUp,
    maxLatenessSeconds: s.maxLatenessSeconds === null ? "" : String(s.maxLatenessSeconds),
    jitterSeconds: String(s.jitterSeconds),
    overlap: s.overlap,
    retryMaxAttempts: String(s.retry.maxAttempts),
    retryBaseSeconds: String(s.retry.baseSeconds),
    retryCapSeconds: String(s.retry.capSeconds),
    leaseSeconds: String(s.leaseSeconds),
    lateAfterSeconds: s.lateAfterSeconds === null ? "" : String(s.lateAfterSeconds),
    lateGraceSeconds: s.lateGraceSeconds === null ? "" : String(s.lateGraceSeconds),
    backlogAfterSeconds: s.backlogAfterSeconds === null ? "" : String(s.backlogAfterSeconds),
    enabled: s.enabled,
    tags: (s.tags ?? []).join(", "),
    owner: s.owner ?? "",
    timeoutSeconds: s.timeoutSeconds == null ? "" : String(s.timeoutSeconds),
    queue: s.queue ?? SCHEDULE_DEFAULTS.queue,
    maxConcurrent: s.maxConcurrent == null ? "" : String(s.maxConcurrent),
  };
}

/** "billing, nightly  eu" → ["billing", "nightly", "eu"]: commas or spaces separate tags. */
export function parseTags(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** "" → undefined (so the API reports "required"/defaults), "12" → 12, "1.5" / "x" → NaN (a type error). */
function num(v: string): number | undefined {
  const t = v.trim();
  if (t === "") return undefined;
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : Number.NaN;
}

/** The payload text as JSON, or the message explaining why it is not. */
export function parsePayload(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text.trim() === "" ? "{}" : text) };
  } catch (err) {
    return { ok: false, message: `payload is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The JSON body for POST (create) or PATCH (edit, without `version`); null when the payload is not JSON. */
export function toBody(v: FormValues, mode: "create" | "edit"): Record<string, unknown> | null {
  const payload = parsePayload(v.payload);
  if (!payload.ok) return null;
  const interval = v.timingKind === "interval";
  const body: Record<string, unknown> = {
    ...(mode === "create" ? { name: v.name.trim() } : {}),
    description: v.description,
    handler: v.handler,
    payload: payload.value,
    cron: interval ? (mode === "edit" ? null : undefined) : v.cron.trim(),
    everySeconds: interval ? num(v.everySeconds) : mode === "edit" ? null : undefined,
    timezone: v.timezone.trim(),
    catchUp: v.catchUp,
    maxLatenessSeconds: num(v.maxLatenessSeconds) ?? null,
    jitterSeconds: num(v.jitterSeconds),
    overlap: v.overlap,
    retry: { maxAttempts: num(v.retryMaxAttempts), baseSeconds: num(v.retryBaseSeconds), capSeconds: num(v.retryCapSeconds) },
    leaseSeconds: num(v.leaseSeconds),
    // Empty override: the default rule (omitted on create, cleared with null on edit).
    lateAfterSeconds: num(v.lateAfterSeconds) ?? (mode === "edit" ? null : undefined),
    lateGraceSeconds: num(v.lateGraceSeconds) ?? (mode === "edit" ? null : undefined),
    backlogAfterSeconds: num(v.backlogAfterSeconds) ?? (mode === "edit" ? null : undefined),
    enabled: v.enabled,
    tags: parseTags(v.tags),
    // Empty: nobody (omitted on create, cleared with null on edit).
    owner: v.owner.trim() === "" ? (mode === "edit" ? null : undefined) : v.owner.trim(),
    // Empty: no timeout (omitted on create, cleared with null on edit).
    timeoutSeconds: num(v.timeoutSeconds) ?? (mode === "edit" ? null : undefined),
    queue: v.queue.trim(),
    // Empty: no limit (omitted on create, cleared with null on edit).
    maxConcurrent: num(v.maxConcurrent) ?? (mode === "edit" ? null : undefined),
  };
  return stripUndefined(body);
}

/** Drop undefined keys (one level, and inside retry); NaN stays so validation can name it. */
function stripUndefined(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    out[k] = v && typeof v === "object" && !Array.isArray(v) && k === "retry" ? stripUndefined(v as Record<string, unknown>) : v;
  }
  return out;
}

function check(body: Record<string, unknown>, mode: "create" | "patch"): { field: string; message: string } | null {
  try {
    if (mode === "patch") parseScheduleInput({ ...body, version: 1 }, "patch");
    else parseScheduleInput(body, "create");
    return null;
  } catch (err) {
    if (err instanceof AppError) return { field: err.field ?? "form", message: err.message };
    return { field: "form", message: String(err) };
  }
}

/**
 * Every field's error, each field checked on its own (so a bad cron shows while the name is still
 * empty), then the whole body for the rules that span fields.
 */
export function validateValues(v: FormValues, mode: "create" | "edit"): FieldErrors {
  const errors: FieldErrors = {};
  const payload = parsePayload(v.payload);
  if (!payload.ok) errors.payload = payload.message;
  const body = toBody(v, mode) ?? { ...toBody({ ...v, payload: "{}" }, mode) };
  const parts: Record<string, unknown>[] = [
    { name: body.name },
    { handler: body.handler },
    { description: body.description },
    v.timingKind === "cron" ? { cron: body.cron ?? "", timezone: body.timezone } : { everySeconds: body.everySeconds, timezone: body.timezone },
    { maxLatenessSeconds: body.maxLatenessSeconds },
    { jitterSeconds: body.jitterSeconds },
    { leaseSeconds: body.leaseSeconds },
    { lateAfterSeconds: body.lateAfterSeconds },
    { lateGraceSeconds: body.lateGraceSeconds },
    { backlogAfterSeconds: body.backlogAfterSeconds },
    { retry: body.retry },
    { tags: body.tags },
    { owner: body.owner },
    { timeoutSeconds: body.timeoutSeconds },
    { queue: body.queue },
    { maxConcurrent: body.maxConcurrent },
  ];
  if (payload.ok) parts.push({ payload: body.payload });
  for (const part of parts) {
    const clean = stripUndefined(part);
    if (mode === "create" && "name" in part && clean.name === undefined) clean.name = "";
    const e = check(clean, "patch");
    // A tag's own error ("tags.2") shows beside the one tags input.
    const field = e?.field.startsWith("tags.") ? "tags" : e?.field;
    if (e && field && !errors[field]) errors[field] = e.message;
  }
  if (Object.keys(errors).length === 0) {
    const e = check(body, mode === "create" ? "create" : "patch");
    if (e) errors[e.field] = e.message;
  }
  return errors;
}
