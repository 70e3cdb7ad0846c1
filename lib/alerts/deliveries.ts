/**
 * Deliveries: one row per (alert event, channel), sent by their own worker loop so a slow or dead
 * receiver never holds up running jobs. The shape is the run queue's, in miniature:
 *
 * - claim due rows with `FOR UPDATE SKIP LOCKED`, bumping `attempts` (the fencing token) and
 *   pushing `next_attempt_at` one lease ahead — if the sender dies mid-send, the row is due again
 *   after the lease and another worker takes it;
 * - send outside any transaction, with a timeout shorter than the lease;
 * - finish fenced on `attempts`: a sender whose lease ran out writes nothing;
 * - on failure retry with full-jitter backoff (lib/runs/backoff.ts), and after the last attempt
 *   mark the row `failed` with `last_error`, both visible in the console's alert history.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { backoffSeconds, type RetryPolicy } from "../runs/backoff";
import type { AlertMessage } from "./message";
import type { AlertDetails } from "./rules";
import type { SendContext, SendableChannel } from "./send";

export const DELIVERY_STATES = ["pending", "delivered", "failed"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * 8 attempts, ceilings 15, 30, 60, 120, 240, 480, 900 s between them: a receiver that is down for
 * up to ~30 minutes still gets the alert; beyond that it is marked failed.
 */
export const DELIVERY_RETRY: RetryPolicy = { maxAttempts: 8, baseSeconds: 15, capSeconds: 900 };

/** A claimed delivery holds its row this long; must exceed the send timeout. */
export const DELIVERY_LEASE_SECONDS = 60;

export type ClaimedDelivery = { id: number; attempt: number; channel: SendableChannel & { id: number; enabled: boolean }; message: AlertMessage };

type Row = {
  id: number;
  attempts: number;
  channel_id: number;
  channel_kind: string;
  channel_config: unknown;
  channel_enabled: boolean;
  event_id: number;
  schedule_id: number | null;
  schedule_name: string;
  rule: string;
  kind: AlertMessage["kind"];
  at: string;
  details: AlertDetails;
};

/** Claim up to `limit` due deliveries (oldest first), skipping rows other workers hold. */
export async function claimDeliveries(db: Db, limit: number, leaseSeconds = DELIVERY_LEASE_SECONDS): Promise<ClaimedDelivery[]> {
  const r = await db.execute<Row>(sql`
    WITH due AS (
      SELECT d.id FROM alert_deliveries d
      WHERE d.state = 'pending' AND d.next_attempt_at <= sk_now()
      ORDER BY d.next_attempt_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE alert_deliveries d SET
      attempts = d.attempts + 1,
      -- A lease, not a state: a sender that dies mid-send leaves the row due again after it.
      next_attempt_at = sk_now() + make_interval(secs => ${leaseSeconds})
    FROM due, alert_events e, alert_channels c
    WHERE d.id = due.id AND e.id = d.event_id AND c.id = d.channel_id
    RETURNING d.id, d.attempts, c.id AS channel_id, c.kind AS channel_kind, c.config AS channel_config,
      c.enabled AS channel_enabled, e.id AS event_id, e.schedule_id, e.schedule_name, e.rule, e.kind, e.at, e.details`);
  return r.rows.map((row) => ({
    id: Number(row.id),
    attempt: row.attempts,
    channel: { id: Number(row.channel_id), kind: row.channel_kind, config: row.channel_config, enabled: row.channel_enabled },
    message: {
      eventId: Number(row.event_id),
      kind: row.kind,
      scheduleId: row.schedule_id === null ? null : Number(row.schedule_id),
      scheduleName: row.schedule_name,
      rule: row.rule,
      at: new Date(row.at).toISOString(),
      details: row.details,
    },
  }));
}

export type DeliveryOutcome = { ok: true } | { ok: false; error: string; retry: boolean };

/** Record the outcome of one attempt, fenced on the attempt number; false when the lease was lost. */
export async function finishDelivery(db: Db, d: { id: number; attempt: number }, outcome: DeliveryOutcome, policy = DELIVERY_RETRY): Promise<boolean> {
  const fence = sql`id = ${d.id} AND attempts = ${d.attempt} AND state = 'pending'`;
  if (outcome.ok) {
    const r = await db.execute(sql`
      UPDATE alert_deliveries SET state = 'delivered', delivered_at = sk_now(), last_error = NULL WHERE ${fence}`);
    return (r.rowCount ?? 0) > 0;
  }
  const error = outcome.error.slice(0, 1000);
  const final = !outcome.retry || d.attempt >= policy.maxAttempts;
  const r = final
    ? await db.execute(sql`UPDATE alert_deliveries SET state = 'failed', last_error = ${error} WHERE ${fence}`)
    : await db.execute(sql`
        UPDATE alert_deliveries SET last_error = ${error},
          next_attempt_at = sk_now() + make_interval(secs => ${backoffSeconds(policy, d.attempt)})
        WHERE ${fence}`);
  return (r.rowCount ?? 0) > 0;
}

export type DeliverResult = { claimed: number; delivered: number; retrying: number; failed: number };

/** One pass of the delivery loop: claim a batch, send each (concurrently, with timeouts), record outcomes. */
export async function deliverOnce(
  db: Db,
  opts: {
    limit: number;
    send: (channel: SendableChannel, message: AlertMessage, ctx: SendContext) => Promise<void>;
    ctx: SendContext;
    policy?: RetryPolicy;
  },
): Promise<DeliverResult> {
  const policy = opts.policy ?? DELIVERY_RETRY;
  const batch = await claimDeliveries(db, opts.limit);
  const result: DeliverResult = { claimed: batch.length, delivered: 0, retrying: 0, failed: 0 };
  await Promise.all(
    batch.map(async (d) => {
      let outcome: DeliveryOutcome;
      if (!d.channel.enabled) {
        outcome = { ok: false, error: "channel disabled before delivery", retry: false };
      } else {
        try {
          await opts.send(d.channel, d.message, opts.ctx);
          outcome = { ok: true };
        } catch (err) {
          outcome = { ok: false, error: err instanceof Error ? err.message : String(err), retry: true };
        }
      }
      // We MUST record the attempt whatever happened; a lost lease (false) means another worker owns it now.
      await finishDelivery(db, d, outcome, policy);
      if (outcome.ok) result.delivered++;
      else if (!outcome.retry || d.attempt >= policy.maxAttempts) result.failed++;
      else result.retrying++;
    }),
  );
  return result;
}
