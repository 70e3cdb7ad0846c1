/**
 * The auto-resume pass: resume paused schedules whose `resume_at` has passed by sk_now(), through
 * the resume mutation (so the slots missed while paused follow the schedule's catch-up policy, as
 * on any resume). Each schedule in its own transaction, re-checked under its row lock, so two
 * workers never resume one twice and a schedule paused again meanwhile is left alone.
 */
import { sql } from "drizzle-orm";
import { SYSTEM_ACTOR } from "../audit/record";
import type { Db } from "../db/client";
import type { Schedule } from "../db/schema";
import { setEnabledIn } from "./mutations";

export async function resumeDueSchedules(db: Db, opts: { limit?: number } = {}): Promise<{ resumed: string[] }> {
  const due = await db.execute<{ id: number }>(sql`
    SELECT id FROM schedules WHERE resume_at <= sk_now() AND NOT enabled AND deleted_at IS NULL ORDER BY resume_at LIMIT ${opts.limit ?? 100}`);
  const resumed: string[] = [];
  for (const { id } of due.rows) {
    const name = await db.transaction(async (tx) => {
      const locked = await tx.execute(sql`
        SELECT id FROM schedules WHERE id = ${Number(id)} AND resume_at <= sk_now() AND NOT enabled AND deleted_at IS NULL FOR UPDATE`);
      if (!locked.rows[0]) return null;
      const [s] = await tx.query.schedules.findMany({ where: (t, { eq }) => eq(t.id, Number(id)) });
      await setEnabledIn(tx, s as Schedule, true, SYSTEM_ACTOR);
      return s.name;
    });
    if (name) resumed.push(name);
  }
  return { resumed };
}
