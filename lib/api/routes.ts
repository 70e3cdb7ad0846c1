/**
 * Every route under app/api, described once for the OpenAPI document (lib/api/openapi.ts): its
 * access, path and query parameters, body and answers, each a zod schema. Bodies are the schemas the
 * routes validate with; query parameters too where the route parses them with zod (audit, alert
 * history), and otherwise a zod description of what the route's own parser accepts.
 * app/api/openapi.test.ts fails when a route file or an exported method is missing here, or when
 * this lists one that does not exist, checks real answers against the document, and checks that every
 * GET reads exactly the query parameters listed here (a spy on URLSearchParams records what it reads).
 */
import { z } from "zod";
import { channelInput } from "../alerts/channels";
import { alertEventPageSchema, historyFilters } from "../alerts/history";
import { auditQuerySchema } from "../audit/filter";
import { auditPageSchema } from "../audit/queries";
import { passwordChangeSchema, personInputSchema, personPatchSchema } from "../auth/person-input";
import { tokenInputSchema } from "../auth/token-input";
import { runState } from "../db/schema";
import { healthChartsSchema } from "../health/charts";
import { timingPreviewAnswerSchema } from "../previews/timing";
import { runPageSchema } from "../runs/history";
import { operatorSkipBodySchema } from "../runs/operator-skip-input";
import { requeueBodySchema, requeueResultSchema } from "../runs/requeue";
import { planSummarySchema } from "../schedules/as-code/plan";
import { scheduleDocumentSchema } from "../schedules/as-code/export";
import { backfillAnswerSchema, backfillBodySchema } from "../schedules/backfill";
import { scheduleCreateSchema, schedulePatchSchema } from "../schedules/input";
import { runsBody, schedulesBody } from "../bulk/filter-input";
import { bulkRunsResultSchema } from "../bulk/runs";
import { bulkSchedulesResultSchema } from "../bulk/schedules";
import { handlerLimitBodySchema } from "../handlers/limits";
import { runNowBodySchema } from "../schedules/run-now-input";
import { SCHEDULE_SORTS } from "../schedules/list";
import { HEALTH_STATUSES } from "../health/schedule-health";
import * as answers from "./answers";

/** Who may call a route (lib/server/route.ts): nobody in particular, or a scope (`self`: any signed-in caller, on their own account). */
export type RouteAccess = "open" | "read" | "operate" | "admin" | "self";

/** One answer: JSON described by `schema`, another content type, or no body (204). */
export type RouteAnswer = { description: string; schema?: z.ZodType; contentType?: string };

export type RouteOperation = {
  summary: string;
  access: RouteAccess;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** A body the route accepts but does not need (pause, cancel, discard). */
  bodyOptional?: boolean;
  /** Success answers by status. */
  answers: Record<number, RouteAnswer>;
  /** Error answers beyond those every guarded route can give (400 for bad input, 401, 403, 413 for a body, 404 for a path parameter, 500). */
  errors?: number[];
};

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

/** A route's path as OpenAPI writes it (`/api/schedules/{name}`), its path parameters and its operations. */
export type RouteDescription = { path: string; params?: Record<string, z.ZodType>; operations: Partial<Record<HttpMethod, RouteOperation>> };

const scheduleName = z.string().min(1).max(200).describe("a schedule's name, URL-encoded");
const numericId = (what: string) => z.string().regex(/^[1-9]\d*$/).describe(`${what} id, a positive integer`);
const instant = z.string().describe("an ISO 8601 instant");
const bool = z.enum(["true", "false"]);
const limit = (max: number, dflt: number) => z.string().regex(/^\d+$/).describe(`at most ${max}, default ${dflt}`);

/** What lib/runs/history.ts parseRunQuery accepts (state: repeated or comma-separated). */
const runQuery = z.object({
  state: z.string().describe(`one or more of ${runState.enumValues.join(", ")}, comma-separated or repeated`).optional(),
  from: instant.describe("slot time from (inclusive)").optional(),
  to: instant.describe("slot time to (inclusive)").optional(),
  upcoming: bool.describe("false hides slots written ahead of the database clock").optional(),
  cursor: z.string().describe("the nextCursor of the previous page").optional(),
  limit: limit(200, 50).optional(),
});

/** The optional body of a pause (lib/schedules/pause-input.ts). */
const pauseBody = z.object({ note: z.string().min(1).max(2000).nullable().optional(), resumeAt: instant.nullable().optional() }).strict();
/** POST /api/apply (lib/schedules/as-code/request.ts): the file's text as `document`, or its entries as `schedules`. */
const applyBody = z.union([
  z.object({ source: z.string().min(1).max(200), prune: z.boolean().optional(), dryRun: z.boolean().optional(), document: z.string().describe("YAML or JSON text") }).strict(),
  z.object({ source: z.string().min(1).max(200), prune: z.boolean().optional(), dryRun: z.boolean().optional(), schedules: z.array(z.record(z.string(), z.unknown())) }).strict(),
]);
/** POST /api/auth/login (lib/auth/login.ts). */
const loginBody = z.object({ user: z.string().min(1).max(100), password: z.string().min(1).max(1024) });

const ok = (description: string, schema: z.ZodType): Record<number, RouteAnswer> => ({ 200: { description, schema } });
const noContent = (description: string): Record<number, RouteAnswer> => ({ 204: { description } });

/** Every route of app/api, in the order of docs/api.md. */
export const API_ROUTES: RouteDescription[] = [
  {
    path: "/api/schedules",
    operations: {
      get: {
        summary: "Search, filter, sort and page through the live schedules, with their health",
        access: "read",
        query: z.object({
          search: z.string().describe("a case-insensitive substring of the name, handler or description").optional(),
          status: z.string().describe(`one or more of ${HEALTH_STATUSES.join(", ")}, comma-separated`).optional(),
          tag: z.string().describe("carries this tag").optional(),
          handler: z.string().describe("this handler (exact)").optional(),
          queue: z.string().describe("this queue (exact)").optional(),
          owner: z.string().describe("this owner (exact)").optional(),
          managedBy: z.string().describe("managed by the schedules file with this source").optional(),
          managed: bool.describe("true: managed by a schedules file; false: console-made").optional(),
          paused: bool.optional(),
          enabled: bool.optional(),
          timing: z.enum(["cron", "interval"]).optional(),
          sort: z.enum(SCHEDULE_SORTS).describe("name (default); nextDue; lastSuccess: longest since success first; status: failing, late, backlogged, healthy, paused").optional(),
          limit: limit(500, 100).optional(),
          cursor: z.string().describe("the nextCursor of the previous page, with the same filters and sort; a page can be short when a status filter is on, only a null nextCursor ends the list").optional(),
        }),
        answers: ok("a page of schedules", answers.schedulesPageSchema),
      },
      post: { summary: "Create a schedule", access: "operate", body: scheduleCreateSchema, answers: { 201: { description: "the schedule and warnings", schema: answers.savedScheduleAnswerSchema } }, errors: [409] },
    },
  },
  {
    path: "/api/schedules/{name}",
    params: { name: scheduleName },
    operations: {
      get: { summary: "One schedule with its health", access: "read", answers: ok("the schedule", answers.scheduleAnswerSchema) },
      patch: { summary: "Edit a schedule (optimistic: send the version you read)", access: "operate", body: schedulePatchSchema, answers: ok("the schedule and warnings", answers.savedScheduleAnswerSchema), errors: [409] },
      delete: {
        summary: "Delete a schedule",
        access: "operate",
        query: z.object({ history: z.enum(["keep", "delete"]).optional() }),
        answers: ok("what was deleted", answers.deletedScheduleAnswerSchema),
      },
    },
  },
  {
    path: "/api/schedules/{name}/pause",
    params: { name: scheduleName },
    operations: { post: { summary: "Pause a schedule, with an optional note and resume time", access: "operate", body: pauseBody, bodyOptional: true, answers: ok("the schedule", answers.scheduleAnswerSchema) } },
  },
  {
    path: "/api/schedules/{name}/resume",
    params: { name: scheduleName },
    operations: { post: { summary: "Resume a schedule", access: "operate", answers: ok("the schedule", answers.scheduleAnswerSchema) } },
  },
  {
    path: "/api/schedules/{name}/run-now",
    params: { name: scheduleName },
    operations: { post: { summary: "Make a manual run, due now, with the schedule's payload or its own", access: "operate", body: runNowBodySchema, bodyOptional: true, answers: ok("the run", answers.manualRunAnswerSchema), errors: [409] } },
  },
  {
    path: "/api/schedules/{name}/backfill",
    params: { name: scheduleName },
    operations: {
      post: {
        summary: "One backfill run per slot in [from, to] that has none",
        access: "operate",
        query: z.object({ dryRun: z.enum(["1", "true"]).optional() }),
        body: backfillBodySchema,
        answers: ok("what it made (or would make)", backfillAnswerSchema),
      },
    },
  },
  {
    path: "/api/schedules/{name}/runs",
    params: { name: scheduleName },
    operations: { get: { summary: "A schedule's runs, newest slot first", access: "read", query: runQuery, answers: ok("a page of runs", runPageSchema) } },
  },
  {
    path: "/api/schedules/{name}/audit",
    params: { name: scheduleName },
    operations: { get: { summary: "A schedule's audit entries, newest first", access: "read", query: auditQuerySchema.omit({ schedule: true }), answers: ok("a page of audit entries", auditPageSchema) } },
  },
  {
    path: "/api/apply",
    operations: { post: { summary: "Apply (or plan, with dryRun) a schedules file", access: "operate", body: applyBody, answers: ok("what changed (or would)", planSummarySchema), errors: [409] } },
  },
  {
    path: "/api/export",
    operations: {
      get: {
        summary: "Every live schedule's body, secrets masked",
        access: "read",
        query: z.object({ format: z.enum(["json", "yaml"]).optional() }),
        answers: { 200: { description: "the document (YAML text with format=yaml)", schema: scheduleDocumentSchema } },
      },
    },
  },
  {
    path: "/api/runs",
    operations: {
      get: { summary: "Runs across schedules, newest slot first", access: "read", query: runQuery.extend({ schedule: z.string().describe("a schedule's name").optional() }), answers: ok("a page of runs", runPageSchema) },
    },
  },
  {
    path: "/api/runs/{id}",
    params: { id: numericId("a run's") },
    operations: { get: { summary: "One run with its attempts and idempotency key", access: "read", answers: ok("the run", answers.runAnswerSchema) } },
  },
  {
    path: "/api/runs/{id}/requeue",
    params: { id: numericId("a run's") },
    operations: { post: { summary: "Re-queue a dead run", access: "operate", answers: ok("the run re-queued", answers.requeuedRunAnswerSchema), errors: [409] } },
  },
  {
    path: "/api/runs/requeue",
    operations: { post: { summary: "Re-queue the dead runs of a selection", access: "operate", body: requeueBodySchema, answers: ok("what was re-queued", requeueResultSchema) } },
  },
  {
    path: "/api/runs/{id}/cancel",
    params: { id: numericId("a run's") },
    operations: { post: { summary: "Cancel a pending run no worker has claimed", access: "operate", body: operatorSkipBodySchema, bodyOptional: true, answers: ok("the run, now skipped", answers.settledRunAnswerSchema), errors: [409] } },
  },
  {
    path: "/api/runs/{id}/discard",
    params: { id: numericId("a run's") },
    operations: { post: { summary: "Discard a dead run", access: "operate", body: operatorSkipBodySchema, bodyOptional: true, answers: ok("the run, now skipped", answers.settledRunAnswerSchema), errors: [409] } },
  },
  {
    path: "/api/health",
    operations: {
      get: {
        summary: "Liveness: can the web process query the database",
        access: "open",
        answers: { 200: { description: "the database is up", schema: answers.healthAnswerSchema }, 503: { description: "the database is down", schema: answers.healthDownAnswerSchema } },
      },
    },
  },
  { path: "/api/overview", operations: { get: { summary: "Totals, counts by status, the worst 50 by since-last-success and by oldest pending, and the due runs' waits", access: "read", answers: ok("the overview", answers.overviewAnswerSchema) } } },
  {
    path: "/api/charts",
    operations: {
      get: {
        summary: "Health over time: runs by outcome, since last success, oldest pending age",
        access: "read",
        query: z.object({ window: z.enum(["1h", "24h", "7d"]).optional(), schedule: z.string().optional() }),
        answers: ok("the charts", healthChartsSchema),
      },
    },
  },
  {
    path: "/api/timing/preview",
    operations: {
      get: {
        summary: "The next fire times of a timing (an invalid timing answers 200 with error)",
        access: "read",
        query: z.object({ cron: z.string().optional(), timezone: z.string().optional(), everySeconds: z.string().optional(), count: z.string().describe("1 to 20, default 5").optional() }),
        answers: ok("the preview", timingPreviewAnswerSchema),
      },
    },
  },
  {
    path: "/api/handlers/{name}/limit",
    params: { name: z.string().min(1).describe("a handler's name") },
    operations: { put: { summary: "Set or remove a handler's fleet-wide concurrency limit", access: "operate", body: handlerLimitBodySchema, answers: ok("the limit", answers.handlerLimitAnswerSchema) } },
  },
  {
    path: "/api/bulk/schedules",
    operations: { post: { summary: "Pause or resume every schedule a filter matches (a dry run counts first)", access: "operate", body: schedulesBody, answers: ok("what matched and changed", bulkSchedulesResultSchema) } },
  },
  {
    path: "/api/bulk/runs",
    operations: { post: { summary: "Re-queue or discard every dead run a filter matches (a dry run counts first)", access: "operate", body: runsBody, answers: ok("what matched and changed", bulkRunsResultSchema) } },
  },
  { path: "/api/handlers", operations: { get: { summary: "The handlers the web knows and the workers registered", access: "read", answers: ok("the handlers", answers.handlersAnswerSchema) } } },
  { path: "/api/workers", operations: { get: { summary: "Live workers, then those gone in the last day", access: "read", answers: ok("the workers", answers.workersAnswerSchema) } } },
  {
    path: "/api/metrics",
    operations: { get: { summary: "Prometheus metrics", access: "read", answers: { 200: { description: "Prometheus text exposition format", contentType: "text/plain; version=0.0.4; charset=utf-8" } } } },
  },
  {
    path: "/api/openapi.json",
    operations: { get: { summary: "This document", access: "read", answers: { 200: { description: "the OpenAPI 3.1 document of this API", contentType: "application/json" } } } },
  },
  { path: "/api/alerts", operations: { get: { summary: "The alerts firing now", access: "read", answers: ok("what fires", answers.firingAnswerSchema) } } },
  {
    path: "/api/alerts/events",
    operations: { get: { summary: "Alert history, newest first, with deliveries", access: "read", query: historyFilters, answers: ok("a page of events", alertEventPageSchema) } },
  },
  {
    path: "/api/alerts/channels",
    operations: {
      get: { summary: "Notification channels", access: "read", answers: ok("the channels", answers.channelsAnswerSchema) },
      post: { summary: "Create a channel", access: "operate", body: channelInput, answers: { 201: { description: "the channel", schema: answers.channelAnswerSchema } }, errors: [409] },
    },
  },
  {
    path: "/api/alerts/channels/{id}",
    params: { id: numericId("a channel's") },
    operations: {
      get: { summary: "One channel", access: "read", answers: ok("the channel", answers.channelAnswerSchema) },
      patch: { summary: "Replace a channel's settings (the body of a create)", access: "operate", body: channelInput, answers: ok("the channel", answers.channelAnswerSchema), errors: [409] },
      delete: { summary: "Delete a channel (its history stays)", access: "operate", answers: noContent("deleted") },
    },
  },
  {
    path: "/api/alerts/channels/{id}/test",
    params: { id: numericId("a channel's") },
    operations: { post: { summary: "Send a sample notification now", access: "operate", answers: ok("the receiver's verdict", answers.channelTestAnswerSchema) } },
  },
  { path: "/api/me", operations: { get: { summary: "Who is asking, and the access mode", access: "read", answers: ok("the caller", answers.meAnswerSchema) } } },
  {
    path: "/api/me/password",
    operations: { post: { summary: "Change one's own password (people only)", access: "self", body: passwordChangeSchema, answers: noContent("changed; a fresh session cookie is set") } },
  },
  {
    path: "/api/auth/login",
    operations: {
      post: { summary: "Sign in; sets the session cookie", access: "open", body: loginBody, answers: ok("who signed in", answers.loginAnswerSchema), errors: [400, 401, 403, 409, 413, 429, 503] },
    },
  },
  {
    path: "/api/auth/logout",
    operations: {
      post: { summary: "Sign out; clears the session cookie", access: "open", query: z.object({ everywhere: z.enum(["1"]).optional() }), answers: noContent("signed out"), errors: [403] },
    },
  },
  {
    path: "/api/auth/oidc/start",
    operations: {
      get: {
        summary: "Begin single sign-on: a redirect to the OpenID provider (authorization code with PKCE); 404 unless SLOTKEEPER_OIDC_ISSUER is set",
        access: "open",
        query: z.object({ next: z.string().describe("a path on this console to land on after sign-in").optional() }),
        answers: { 302: { description: "to the provider's authorization endpoint, with the state in an HttpOnly cookie" } },
        errors: [404],
      },
    },
  },
  {
    path: "/api/auth/oidc/callback",
    operations: {
      get: {
        summary: "Finish single sign-on: the provider's redirect back; starts a session and sends the browser on, or says why it refused",
        access: "open",
        query: z.object({ code: z.string().optional(), state: z.string().optional(), error: z.string().optional() }),
        answers: { 200: { description: "a page that sends the browser on (the session cookie set), or a refusal page", contentType: "text/html" } },
        errors: [404],
      },
    },
  },
  {
    path: "/api/people",
    operations: {
      get: { summary: "Every person, by name", access: "admin", answers: ok("the people", answers.peopleAnswerSchema) },
      post: { summary: "Add a person", access: "admin", body: personInputSchema, answers: { 201: { description: "the person", schema: answers.personAnswerSchema } }, errors: [409] },
    },
  },
  {
    path: "/api/people/{name}",
    params: { name: z.string().min(1).max(64).describe("a person's login name") },
    operations: { patch: { summary: "Change a person's role, name, password or disabled state", access: "admin", body: personPatchSchema, answers: ok("the person", answers.personAnswerSchema) } },
  },
  {
    path: "/api/tokens",
    operations: {
      get: { summary: "Every API token (never a secret), newest first", access: "admin", answers: ok("the tokens", answers.tokensAnswerSchema) },
      post: { summary: "Create a token; its secret is shown this once", access: "admin", body: tokenInputSchema, answers: { 201: { description: "the token and its record", schema: answers.createdTokenAnswerSchema } }, errors: [409] },
    },
  },
  {
    path: "/api/tokens/{id}/revoke",
    params: { id: numericId("a token's") },
    operations: { post: { summary: "Revoke a token", access: "admin", answers: ok("the token's record", answers.tokenAnswerSchema) } },
  },
  {
    path: "/api/audit",
    operations: { get: { summary: "The audit log, newest first", access: "read", query: auditQuerySchema, answers: ok("a page of audit entries", auditPageSchema) } },
  },
];
