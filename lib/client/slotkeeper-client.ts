// `slotkeeper/client`: a typed client of the console's JSON API, for scripts and services.
//
//   import { createClient } from "slotkeeper/client";
//   const sk = createClient({ url: "http://localhost:3000", token: process.env.SLOTKEEPER_TOKEN });
//   await sk.createSchedule({ name: "nightly-report", handler: "http", cron: "0 2 * * *", payload: { url: "…" } });
//   const { runs } = await sk.listRuns({ state: "dead" });
//
// Built to dist/client.js by scripts/build-package.ts. It imports nothing of the server: fetch only.
import type { ScheduleCreateInput, SchedulePatch } from "../schedules/input";
import type { RunDetail, RunPage } from "../runs/history";
import type { ScheduleView } from "../schedules/view";
import type { ScheduleHealth } from "../health/schedule-health";
import type { WorkerView } from "../workers/queries";
import type { HandlerListing } from "../handlers/warnings";
import type { PersonView } from "../auth/people";
import type { TokenView } from "../auth/tokens";
import type { BulkRunsResult } from "../bulk/runs";
import type { BulkSchedulesResult } from "../bulk/schedules";
import type { PlanSummary } from "../schedules/as-code/plan";
import type { ScheduleDocument } from "../schedules/as-code/export";
import type { z } from "zod";
import type { backfillAnswerSchema } from "../schedules/backfill";
import type { manualRunSchema } from "../api/answers";
import type { OperatorSkipResult } from "../runs/operator-skip";
import { SlotkeeperApiError } from "./api-error";

export { SlotkeeperApiError };

export type { ScheduleCreateInput, SchedulePatch, RunDetail, RunPage, ScheduleView, WorkerView, HandlerListing, PlanSummary, ScheduleDocument, BulkRunsResult, BulkSchedulesResult, PersonView, TokenView };
/** A schedules file: its YAML or JSON text, or the parsed `{ schedules: [...] }`. */
export type ApplyDocument = string | { schedules: unknown[] };
/** Whose file it is (`source`: the CLI uses the file's base name) and whether to delete what it no longer lists. */
export type ApplyOptions = { source: string; prune?: boolean };
/** A schedule as the API returns it: its definition and its health. */
export type Schedule = ScheduleView & Partial<ScheduleHealth> & { stuck?: boolean; stuckSince?: string | null };
/** Filters of GET /api/runs and a schedule's history. */
export type RunQuery = { state?: string | string[]; schedule?: string; from?: string | Date; to?: string | Date; cursor?: string; limit?: number; upcoming?: boolean };

/** A run that `runNow` made. */
export type ManualRun = z.infer<typeof manualRunSchema>;
/** What a backfill made (or, with dryRun, would make): `wouldCreate` is set on a dry run. */
export type BackfillResult = z.infer<typeof backfillAnswerSchema>;
/** A run an operator cancelled or discarded: now skipped, with the reason given (or null). */
export type SettledRun = OperatorSkipResult;
/** Filters of GET /api/schedules. */
/**
 * GET /api/schedules' query (docs/api.md): filters, a sort, and the previous page's `nextCursor`.
 * A page can be shorter than `limit` with a status filter; only a null `nextCursor` ends the list.
 */
export type ScheduleQuery = {
  search?: string;
  enabled?: boolean;
  tag?: string;
  owner?: string;
  limit?: number;
  cursor?: string;
  /** One or more of healthy, late, failing, backlogged, paused; comma-separated. */
  status?: string;
  handler?: string;
  queue?: string;
  managedBy?: string;
  managed?: boolean;
  paused?: boolean;
  timing?: "cron" | "interval";
  sort?: "name" | "nextDue" | "lastSuccess" | "status";
};

export type ClientOptions = {
  /** The console's address; defaults to SLOTKEEPER_URL, then http://localhost:3000. */
  url?: string;
  /** An API token (Settings → API tokens), sent as `Authorization: Bearer …`; defaults to SLOTKEEPER_TOKEN. */
  token?: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
};

const enc = encodeURIComponent;
/** An instant for the API: a Date as ISO, a string as given (the API says what is wrong with a bad one). */
const instant = (v: string | Date) => (typeof v === "string" ? v : v.toISOString());

function runQueryString(q: RunQuery = {}): string {
  const p = new URLSearchParams();
  for (const s of [q.state ?? []].flat()) p.append("state", s);
  if (q.schedule) p.set("schedule", q.schedule);
  if (q.from) p.set("from", instant(q.from));
  if (q.to) p.set("to", instant(q.to));
  if (q.cursor) p.set("cursor", q.cursor);
  if (q.limit !== undefined) p.set("limit", String(q.limit));
  if (q.upcoming !== undefined) p.set("upcoming", String(q.upcoming));
  const s = p.toString();
  return s ? `?${s}` : "";
}

function applyBody(doc: ApplyDocument, o: ApplyOptions, dryRun: boolean) {
  return { source: o.source, prune: o.prune ?? false, dryRun, ...(typeof doc === "string" ? { document: doc } : { schedules: doc.schedules }) };
}

/** A client of one Slotkeeper console. Every method resolves with the API's answer or rejects with a SlotkeeperApiError. */
export function createClient(opts: ClientOptions = {}) {
  const env: Record<string, string | undefined> = typeof process === "undefined" ? {} : process.env;
  const base = (opts.url ?? env.SLOTKEEPER_URL ?? "http://localhost:3000").replace(/\/+$/, "");
  const token = opts.token ?? env.SLOTKEEPER_TOKEN;
  const doFetch = opts.fetch ?? fetch;

  /** One request; the answer's JSON, or its text when `as` is "text" (errors are JSON either way). */
  async function call<T>(method: string, path: string, body?: unknown, as: "json" | "text" = "json"): Promise<T> {
    const headers: Record<string, string> = { accept: as === "json" ? "application/json" : "*/*" };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await doFetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.ok && as === "text") return text as T;
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new SlotkeeperApiError(`${method} ${path}: the answer is not JSON (status ${res.status})`, res.status, "http");
    }
    if (!res.ok) {
      const e = (parsed as { error?: { message?: string; code?: string; field?: string } } | undefined)?.error;
      throw new SlotkeeperApiError(e?.message ?? `${method} ${path} failed with ${res.status}`, res.status, e?.code ?? "http", e?.field);
    }
    return parsed as T;
  }

  return {
    health: () => call<{ ok: boolean; database: string }>("GET", "/api/health"),
    /** A page of schedules (by name); pass `nextCursor` back as `cursor` for the next one. */
    listSchedules: (q: ScheduleQuery = {}) => {
      const p = new URLSearchParams(Object.entries(q).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
      return call<{ schedules: Schedule[]; nextCursor: string | null }>("GET", `/api/schedules${p.size ? `?${p}` : ""}`);
    },
    getSchedule: (name: string) => call<{ schedule: Schedule }>("GET", `/api/schedules/${enc(name)}`).then((r) => r.schedule),
    createSchedule: (input: ScheduleCreateInput) => call<{ schedule: Schedule }>("POST", "/api/schedules", input).then((r) => r.schedule),
    /** Edit under optimistic concurrency: `version` is the one you read (409 when it moved on). */
    updateSchedule: (name: string, patch: SchedulePatch & { version: number }) => call<{ schedule: Schedule }>("PATCH", `/api/schedules/${enc(name)}`, patch).then((r) => r.schedule),
    /** Delete a schedule; `history: "delete"` removes its runs too (the default keeps them readable). */
    deleteSchedule: (name: string, opts: { history?: "keep" | "delete" } = {}) =>
      call<{ deleted: string; history: "kept" | "deleted" }>("DELETE", `/api/schedules/${enc(name)}${opts.history ? `?history=${opts.history}` : ""}`),
    /** Pause; a `note` keeps it paused through applies, and a worker resumes it at `resumeAt` (in the future). */
    pauseSchedule: (name: string, hold: { note?: string; resumeAt?: string | Date } = {}) =>
      call<{ schedule: Schedule }>("POST", `/api/schedules/${enc(name)}/pause`, {
        ...(hold.note !== undefined ? { note: hold.note } : {}),
        ...(hold.resumeAt !== undefined ? { resumeAt: instant(hold.resumeAt) } : {}),
      }).then((r) => r.schedule),
    resumeSchedule: (name: string) => call<{ schedule: Schedule }>("POST", `/api/schedules/${enc(name)}/resume`, {}).then((r) => r.schedule),
    /** A manual run now; `payload`, when given, is this run's in place of the schedule's. */
    runNow: (name: string, opts: { payload?: Record<string, unknown> } = {}) =>
      call<{ run: ManualRun }>("POST", `/api/schedules/${enc(name)}/run-now`, opts.payload === undefined ? {} : { payload: opts.payload }).then((r) => r.run),
    backfill: (name: string, range: { from: string | Date; to: string | Date; dryRun?: boolean }) =>
      call<BackfillResult>("POST", `/api/schedules/${enc(name)}/backfill`, { ...range, from: instant(range.from), to: instant(range.to) }),
    /** A schedule's history, newest slot first; pass `nextCursor` back as `cursor` for the next page. */
    listScheduleRuns: (name: string, q: Omit<RunQuery, "schedule"> = {}) => call<RunPage>("GET", `/api/schedules/${enc(name)}/runs${runQueryString(q)}`),
    listRuns: (q: RunQuery = {}) => call<RunPage>("GET", `/api/runs${runQueryString(q)}`),
    /** One run with every attempt and what each left (result, log, stdout, stderr). */
    getRun: (id: number) => call<{ run: RunDetail }>("GET", `/api/runs/${id}`).then((r) => r.run),
    requeueRun: (id: number) => call<{ requeued: number }>("POST", `/api/runs/${id}/requeue`, {}),
    /** Cancel a pending run that no worker has started (409 otherwise): it becomes skipped, reason `cancelled`. */
    cancelRun: (id: number, opts: { reason?: string } = {}) => call<{ run: SettledRun }>("POST", `/api/runs/${id}/cancel`, opts.reason === undefined ? {} : { reason: opts.reason }).then((r) => r.run),
    /** Discard a dead run (409 otherwise): it becomes skipped, reason `discarded`, and no longer makes its schedule failing. */
    discardRun: (id: number, opts: { reason?: string } = {}) => call<{ run: SettledRun }>("POST", `/api/runs/${id}/discard`, opts.reason === undefined ? {} : { reason: opts.reason }).then((r) => r.run),
    listWorkers: () => call<{ workers: WorkerView[] }>("GET", "/api/workers").then((r) => r.workers),
    /** What an apply of this file would do, changing nothing. */
    plan: (doc: ApplyDocument, o: ApplyOptions) => call<PlanSummary>("POST", "/api/apply", applyBody(doc, o, true)),
    /** Apply a schedules file in one transaction; an error in any entry changes nothing. */
    apply: (doc: ApplyDocument, o: ApplyOptions) => call<PlanSummary>("POST", "/api/apply", applyBody(doc, o, false)),
    /** Every schedule's body as a document that apply accepts unchanged (secrets masked). */
    export: () => call<ScheduleDocument>("GET", "/api/export"),
    /** The same document as YAML text, as the server writes it. */
    exportYaml: () => call<string>("GET", "/api/export?format=yaml", undefined, "text"),
    /** Pause or resume every schedule a filter matches, on the server; `dryRun` only names them. */
    bulkSchedules: (body: { action: "pause" | "resume"; filter: { search?: string; tag?: string; owner?: string; status?: string }; note?: string; dryRun?: boolean }) =>
      call<BulkSchedulesResult>("POST", "/api/bulk/schedules", body),
    /** Re-queue or discard every dead run a filter matches (schedule, slot window [from, to)), on the server; `dryRun` only counts. */
    bulkRuns: (body: { action: "requeue" | "discard"; filter: { schedule?: string; from?: string | Date; to?: string | Date }; reason?: string; dryRun?: boolean }) =>
      call<BulkRunsResult>("POST", "/api/bulk/runs", { ...body, filter: { ...body.filter, ...(body.filter.from ? { from: instant(body.filter.from) } : {}), ...(body.filter.to ? { to: instant(body.filter.to) } : {}) } }),
    /** People (admins only): list, add, change (role, displayName, password reset, disabled). */
    listPeople: () => call<{ people: PersonView[] }>("GET", "/api/people").then((r) => r.people),
    addPerson: (input: { name: string; role: string; password: string; displayName?: string | null }) => call<{ person: PersonView }>("POST", "/api/people", input).then((r) => r.person),
    updatePerson: (name: string, patch: { role?: string; displayName?: string | null; password?: string; disabled?: boolean }) =>
      call<{ person: PersonView }>("PATCH", `/api/people/${enc(name)}`, patch).then((r) => r.person),
    /** API tokens (admins only): the secret is in createToken's answer, once. */
    listTokens: () => call<{ tokens: TokenView[] }>("GET", "/api/tokens").then((r) => r.tokens),
    createToken: (input: { name: string; scope: string; expiresAt?: string | null; scheduleTags?: string[] }) => call<{ token: string; tokenInfo: TokenView }>("POST", "/api/tokens", input),
    revokeToken: (id: number) => call<{ tokenInfo: TokenView }>("POST", `/api/tokens/${id}/revoke`, {}).then((r) => r.tokenInfo),
    /** Handlers with their fleet-wide limit (`maxConcurrent`, null: none). */
    listHandlers: () => call<{ handlers: (HandlerListing & { maxConcurrent: number | null })[] }>("GET", "/api/handlers").then((r) => r.handlers),
    /** At most `maxConcurrent` runs of the handler at once across every worker; null removes the limit. */
    setHandlerLimit: (handler: string, maxConcurrent: number | null) =>
      call<{ handler: string; maxConcurrent: number | null }>("PUT", `/api/handlers/${encodeURIComponent(handler)}/limit`, { maxConcurrent }),
  };
}

export type SlotkeeperClient = ReturnType<typeof createClient>;
