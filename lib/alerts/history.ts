/**
 * The alert history the console shows: events newest first (keyset-paginated on id, through
 * alert_events' primary key) with each delivery's state and last error, and what fires right now.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { DELIVERY_STATES, type DeliveryState } from "./deliveries";
import { ALERT_KINDS, ALERT_RULES, alertDetailsSchema, type AlertDetails } from "./rules";

export const deliveryViewSchema = z
  .object({ channelId: z.number().int(), channelName: z.string(), state: z.enum(DELIVERY_STATES), attempts: z.number().int(), lastError: z.string().nullable(), nextAttemptAt: z.string(), deliveredAt: z.string().nullable() })
  .strict();
export type DeliveryView = z.infer<typeof deliveryViewSchema>;
export const alertEventViewSchema = z
  .object({ id: z.number().int(), scheduleId: z.number().int().nullable(), scheduleName: z.string(), rule: z.string(), kind: z.string(), at: z.string(), details: alertDetailsSchema, deliveries: z.array(deliveryViewSchema) })
  .strict();
export type AlertEventView = z.infer<typeof alertEventViewSchema>;
/** GET /api/alerts/events: a page of events, newest first; `nextBefore` is the `before` of the next page. */
export const alertEventPageSchema = z.object({ events: z.array(alertEventViewSchema), nextBefore: z.number().int().nullable() }).strict();
export const firingAlertSchema = z
  .object({ scheduleId: z.number().int(), scheduleName: z.string(), rule: z.string(), since: z.string(), lastNotifiedAt: z.string().nullable() })
  .strict();
export type FiringAlert = z.infer<typeof firingAlertSchema>;

export const historyFilters = z.object({
  schedule: z.string().trim().min(1).max(200).optional(),
  rule: z.enum(ALERT_RULES).optional(),
  kind: z.enum(ALERT_KINDS).optional(),
  /** Keyset cursor: events with a smaller id. */
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type HistoryFilters = z.infer<typeof historyFilters>;

/** Parse the history filters from a URL's query string, or throw naming the bad field. */
export function parseHistoryFilters(params: URLSearchParams): HistoryFilters {
  const raw = Object.fromEntries([...params.entries()].filter(([, v]) => v !== ""));
  const r = historyFilters.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new AppError("invalid", `${issue.path.join(".")}: ${issue.message}`, issue.path.join("."));
}

const iso = (v: string | Date | null) => (v === null ? null : new Date(v).toISOString());

/** Events matching the filters, newest first, each with its deliveries; `nextBefore` pages on. */
export async function listAlertEvents(db: Db, f: HistoryFilters): Promise<{ events: AlertEventView[]; nextBefore: number | null }> {
  const r = await db.execute<{
    id: number;
    schedule_id: number | null;
    schedule_name: string;
    rule: string;
    kind: string;
    at: string;
    details: AlertDetails;
    deliveries: { channel_id: number; channel_name: string; state: DeliveryState; attempts: number; last_error: string | null; next_attempt_at: string; delivered_at: string | null }[] | null;
  }>(sql`
    SELECT e.id, e.schedule_id, e.schedule_name, e.rule, e.kind, e.at, e.details,
      (SELECT json_agg(json_build_object('channel_id', d.channel_id, 'channel_name', c.name, 'state', d.state,
                'attempts', d.attempts, 'last_error', d.last_error, 'next_attempt_at', d.next_attempt_at,
                'delivered_at', d.delivered_at) ORDER BY c.name)
         FROM alert_deliveries d JOIN alert_channels c ON c.id = d.channel_id WHERE d.event_id = e.id) AS deliveries
    FROM alert_events e
    WHERE true
      ${f.schedule ? sql`AND e.schedule_name = ${f.schedule}` : sql``}
      ${f.rule ? sql`AND e.rule = ${f.rule}` : sql``}
      ${f.kind ? sql`AND e.kind = ${f.kind}` : sql``}
      ${f.before ? sql`AND e.id < ${f.before}` : sql``}
    ORDER BY e.id DESC
    LIMIT ${f.limit + 1}`);
  const rows = r.rows.slice(0, f.limit);
  return {
    events: rows.map((e) => ({
      id: Number(e.id),
      scheduleId: e.schedule_id === null ? null : Number(e.schedule_id),
      scheduleName: e.schedule_name,
      rule: e.rule,
      kind: e.kind,
      at: iso(e.at)!,
      details: e.details,
      deliveries: (e.deliveries ?? []).map((d) => ({
        channelId: Number(d.channel_id),
        channelName: d.channel_name,
        state: d.state,
        attempts: d.attempts,
        lastError: d.last_error,
        nextAttemptAt: iso(d.next_attempt_at)!,
        deliveredAt: iso(d.delivered_at),
      })),
    })),
    nextBefore: r.rows.length > f.limit ? Number(rows[rows.length - 1].id) : null,
  };
}

/** The rules firing right now, longest-firing first. */
export async function listFiringAlerts(db: Db): Promise<FiringAlert[]> {
  const r = await db.execute<{ schedule_id: number; name: string; rule: string; since: string; last_notified_at: string | null }>(sql`
    SELECT a.schedule_id, s.name, a.rule, a.since, a.last_notified_at
    FROM alert_states a JOIN schedules s ON s.id = a.schedule_id
    WHERE a.firing ORDER BY a.since, s.name, a.rule`);
  return r.rows.map((a) => ({ scheduleId: Number(a.schedule_id), scheduleName: a.name, rule: a.rule, since: iso(a.since)!, lastNotifiedAt: iso(a.last_notified_at) }));
}
