/**
 * The answers of the API routes whose shape is assembled in the route itself (a view wrapped in
 * `{ schedule }`, a page, a small literal), as zod schemas. The views inside are the schemas beside
 * their types (lib/schedules/view.ts, lib/runs/history.ts, …). The OpenAPI document
 * (lib/api/openapi.ts) and `slotkeeper/client`'s types (lib/client/slotkeeper-client.ts, through
 * `z.infer`) both read these, so the document, the client and the answers agree.
 */
import { z } from "zod";
import { channelViewSchema } from "../alerts/channels";
import { firingAlertSchema } from "../alerts/history";
import { ROLES, SCOPES } from "../auth/scopes";
import { limitedHandlerListingSchema } from "../handlers/warnings";
import { overviewSummarySchema } from "../health/overview";
import { personViewSchema } from "../auth/people";
import { tokenViewSchema } from "../auth/tokens";
import { runDetailSchema } from "../runs/history";
import { operatorSkipResultSchema } from "../runs/operator-skip";
import { runOrigin, runState } from "../db/schema";
import { scheduleWithHealthSchema } from "../schedules/view";
import { workerViewSchema } from "../workers/queries";

/** Something about a saved schedule that did not stop the save, beside the field it concerns (lib/schedules/http.ts). */
export const fieldWarningSchema = z.object({ field: z.string(), message: z.string() }).strict();

/** The read replica's state (lib/server/replica.ts ReplicaStatus); in /api/health only when DATABASE_READ_URL is set. */
export const replicaStatusSchema = z
  .object({
    configured: z.literal(true),
    readsFrom: z.enum(["replica", "primary"]).describe("where the console's read-only pages and /api/metrics read now"),
    state: z.enum(["streaming", "not_standby", "unreachable"]),
    lagSeconds: z.number().nullable().describe("how far the standby's data is behind the primary's"),
    lagBytes: z.number().nullable().describe("WAL the primary wrote that the standby has not replayed"),
    replayPaused: z.boolean().nullable(),
    warn: z.boolean().describe("lag above SLOTKEEPER_REPLICA_LAG_WARN_SECONDS, or reads sent to the primary"),
    lagWarnSeconds: z.number(),
    reason: z.string().optional().describe("why reads go to the primary"),
    checkedAt: z.string(),
  })
  .strict();
export const healthAnswerSchema = z.object({ ok: z.literal(true), database: z.literal("up"), replica: replicaStatusSchema.optional() }).strict();
export const healthDownAnswerSchema = z.object({ ok: z.literal(false), database: z.literal("down"), replica: replicaStatusSchema.optional() }).strict();

export const schedulesPageSchema = z.object({ schedules: z.array(scheduleWithHealthSchema), nextCursor: z.string().nullable() }).strict();
export const scheduleAnswerSchema = z.object({ schedule: scheduleWithHealthSchema }).strict();
/** A create or an edit: the schedule and what did not stop the save. */
export const savedScheduleAnswerSchema = z.object({ schedule: scheduleWithHealthSchema, warnings: z.array(fieldWarningSchema) }).strict();
export const deletedScheduleAnswerSchema = z.object({ deleted: z.string(), history: z.enum(["kept", "deleted"]) }).strict();

/** The run that run-now made. */
export const manualRunSchema = z
  .object({ id: z.number().int(), scheduleId: z.number().int(), scheduledFor: z.string(), origin: z.enum(runOrigin.enumValues), state: z.enum(runState.enumValues), idempotencyKey: z.string() })
  .strict();
export const manualRunAnswerSchema = z.object({ run: manualRunSchema }).strict();

export const runAnswerSchema = z.object({ run: runDetailSchema }).strict();
export const requeuedRunAnswerSchema = z.object({ requeued: z.number().int() }).strict();
export const settledRunAnswerSchema = z.object({ run: operatorSkipResultSchema }).strict();

export const overviewAnswerSchema = overviewSummarySchema;
export const workersAnswerSchema = z.object({ workers: z.array(workerViewSchema) }).strict();
export const handlersAnswerSchema = z.object({ handlers: z.array(limitedHandlerListingSchema) }).strict();
export const handlerLimitAnswerSchema = z.object({ handler: z.string(), maxConcurrent: z.number().int().nullable() }).strict();

export const firingAnswerSchema = z.object({ firing: z.array(firingAlertSchema) }).strict();
export const channelsAnswerSchema = z.object({ channels: z.array(channelViewSchema), smtpConfigured: z.boolean() }).strict();
export const channelAnswerSchema = z.object({ channel: channelViewSchema }).strict();
/** A test notification: `{ ok: true }`, or `{ ok: false, error }` with the receiver's reason. */
export const channelTestAnswerSchema = z.union([z.object({ ok: z.literal(true) }).strict(), z.object({ ok: z.literal(false), error: z.string() }).strict()]);

const actorKinds = ["user", "token", "local", "system"] as const;
export const meAnswerSchema = z
  .object({
    actor: z
      .object({ name: z.string(), kind: z.enum(actorKinds), role: z.enum(ROLES), scope: z.enum(SCOPES), scheduleTags: z.array(z.string()).nullable() })
      .strict(),
    access: z.enum(["loopback-only", "credentials"]),
  })
  .strict();
export const loginAnswerSchema = z.object({ actor: z.object({ name: z.string(), kind: z.enum(actorKinds), role: z.enum(ROLES) }).strict() }).strict();

export const peopleAnswerSchema = z.object({ people: z.array(personViewSchema) }).strict();
export const personAnswerSchema = z.object({ person: personViewSchema }).strict();
export const tokensAnswerSchema = z.object({ tokens: z.array(tokenViewSchema) }).strict();
/** A new token: its secret (`skt_…`), shown this once, and its record. */
export const createdTokenAnswerSchema = z.object({ token: z.string(), tokenInfo: tokenViewSchema }).strict();
export const tokenAnswerSchema = z.object({ tokenInfo: tokenViewSchema }).strict();
