/**
 * Apply a schedules file: the plan (lib/schedules/as-code/plan.ts) executed in ONE transaction
 * that holds a transaction-level advisory lock, so two applies never interleave, through the
 * schedule mutations (lib/schedules/mutations.ts): the same audit entries and version rules as
 * the API. An unchanged schedule is not written at all. Any error rolls everything back.
 */
import { sql } from "drizzle-orm";
import type { Actor } from "../../audit/record";
import type { Db } from "../../db/client";
import { isUniqueViolation } from "../../db/sql-errors";
import { AppError } from "../../errors";
import { createScheduleIn, deleteScheduleIn, updateScheduleIn } from "../mutations";
import { entryError } from "./document";
import { planApply, summarize, type PlanOptions, type PlanSummary } from "./plan";
import type { ScheduleSpec } from "./spec";

/** The advisory lock every apply takes ("sk-apply" as a number). */
export const APPLY_LOCK_KEY = 0x736b2d6170706c79n;

export type ApplyOptions = PlanOptions & { dryRun?: boolean };

function toInput(spec: ScheduleSpec) {
  const { cron, everySeconds, ...rest } = spec;
  return { ...rest, ...(cron !== null ? { cron } : {}), ...(everySeconds !== null ? { everySeconds } : {}) };
}

/** Ends a dry run's transaction, carrying its answer out of the rollback. */
class DryRunDone extends Error {
  constructor(readonly summary: PlanSummary) {
    super("dry run: rolled back");
  }
}

/**
 * Apply the file, or with `dryRun` make every change the same way in a transaction that is rolled
 * back: a plan passes exactly the checks an apply would (the mutations' own, beyond the file's
 * parse), and says what the apply would do, changing nothing.
 */
export async function applySchedules(db: Db, specs: ScheduleSpec[], opts: ApplyOptions, actor: Actor): Promise<PlanSummary> {
  try {
    return await applyInTransaction(db, specs, opts, actor);
  } catch (err) {
    if (err instanceof DryRunDone) return err.summary;
    throw err;
  }
}

async function applyInTransaction(db: Db, specs: ScheduleSpec[], opts: ApplyOptions, actor: Actor): Promise<PlanSummary> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${APPLY_LOCK_KEY.toString()}::bigint)`);
    const plan = await planApply(tx, specs, { ...opts, lock: true });
    for (const c of plan.create) {
      try {
        await createScheduleIn(tx, toInput(c.spec), actor, { by: opts.source, spec: c.spec });
      } catch (err) {
        throw entryError(c.index, c.spec.name, isUniqueViolation(err) || isUniqueViolation((err as { cause?: unknown })?.cause) ? new AppError("conflict", "a schedule of this name was created meanwhile", "name") : err);
      }
    }
    for (const u of plan.update) {
      const { name: _name, ...patch } = toInput(u.spec);
      const kept = plan.keptPaused.some((k) => k.name === u.spec.name);
      if (kept) delete (patch as { enabled?: boolean }).enabled;
      try {
        await updateScheduleIn(tx, u.spec.name, { ...patch, cron: u.spec.cron, everySeconds: u.spec.everySeconds }, u.version, actor, { by: opts.source, spec: u.spec });
      } catch (err) {
        throw entryError(u.index, u.spec.name, err);
      }
    }
    for (const name of plan.delete) await deleteScheduleIn(tx, name, { keepHistory: true }, actor);
    if (opts.dryRun) throw new DryRunDone(summarize(plan));
    return summarize(plan);
  });
}
