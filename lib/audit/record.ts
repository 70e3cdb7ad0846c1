import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import type { Role } from "../auth/scopes";
import { maskSecrets } from "../security/mask";

/** Who made a change: a console user, an API token, a loopback request, or the system itself. */
export type Actor = {
  name: string;
  kind: "user" | "token" | "local" | "system";
  /** What it may do (lib/auth/scopes.ts); a token's scope appears as the matching role. */
  role: Role;
  /** Set for a tag-restricted token: it sees and changes only schedules with at least one of these tags. */
  scheduleTags?: string[];
  /** For a token: which one, and when it expires (a token mints no token outliving itself). */
  token?: { id: number; expiresAt: string | null };
  /** For a person signed in with their own account (lib/auth/people.ts): which one. */
  personId?: number;
};

/** The actor for changes made by Slotkeeper itself (workers, scripts). */
export const SYSTEM_ACTOR: Actor = { name: "system", kind: "system", role: "admin" };

/** Anything that can run a statement: the db, or a transaction inside `db.transaction`. */
type Executor = Pick<Db, "execute">;

export type AuditEntry = {
  action: string; // e.g. "schedule.create", "schedule.update", "run.requeue"
  targetType: "schedule" | "run" | "token" | "channel" | "person" | "system" | "handler";
  targetId?: string | number | null;
  scheduleId?: number | null;
  before?: unknown;
  after?: unknown;
};

/**
 * Record one mutation in the audit log. Call it inside the mutation's own transaction, so the
 * change and its record commit together or not at all. Secrets in before/after are masked
 * (lib/security/mask.ts): the audit log never stores them.
 */
export async function recordAudit(tx: Executor, actor: Actor, e: AuditEntry): Promise<void> {
  await tx.execute(sql`
    INSERT INTO audit_log (at, actor, actor_kind, action, target_type, target_id, schedule_id, before, after)
    VALUES (sk_now(), ${actor.name}, ${actor.kind}, ${e.action}, ${e.targetType},
      ${e.targetId === undefined || e.targetId === null ? null : String(e.targetId)}, ${e.scheduleId ?? null},
      ${e.before === undefined ? null : JSON.stringify(maskSecrets(e.before))}::jsonb, ${e.after === undefined ? null : JSON.stringify(maskSecrets(e.after))}::jsonb)`);
}

/** The fields whose values differ between two snapshots, as { before, after } of just those. */
export function diffFields<T extends Record<string, unknown>>(before: T, after: T): { before: Partial<T>; after: Partial<T> } {
  const b: Partial<T> = {};
  const a: Partial<T> = {};
  for (const key of Object.keys(after) as (keyof T)[]) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) {
      b[key] = before[key];
      a[key] = after[key];
    }
  }
  return { before: b, after: a };
}
