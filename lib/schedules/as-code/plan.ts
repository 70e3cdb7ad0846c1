/**
 * The plan of an apply: each file body (normalized) against the stored schedule of its name.
 * created (no live schedule), updated (differs: the fields and the version read), unchanged,
 * deleted (with prune only: live schedules managed by this source that the file no longer lists).
 * A schedule paused by hand with a note stays paused (`keptPaused`): its `enabled` is not compared.
 */
import { and, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../../db/client";
import { schedules, type Schedule } from "../../db/schema";
import { restoreMasked } from "../../security/mask";
import { differingFields, specOfRow, type ScheduleSpec } from "./spec";

export type PlanOptions = { source: string; prune?: boolean };

export type Plan = {
  create: { index: number; spec: ScheduleSpec }[];
  /** `version`: the stored version the plan read (the edit is made against it). */
  update: { index: number; spec: ScheduleSpec; version: number; fields: string[] }[];
  unchanged: string[];
  delete: string[];
  keptPaused: { name: string; note: string }[];
};

/** The answer of POST /api/apply. */
export const planSummarySchema = z
  .object({
    created: z.array(z.string()),
    updated: z.array(z.string()),
    deleted: z.array(z.string()),
    unchanged: z.array(z.string()),
    keptPaused: z.array(z.object({ name: z.string(), note: z.string() }).strict()),
    /** Per updated schedule: the version read and the fields that differ. */
    changes: z.array(z.object({ name: z.string(), version: z.number().int(), fields: z.array(z.string()) }).strict()),
  })
  .strict();
export type PlanSummary = z.infer<typeof planSummarySchema>;

type Reader = Pick<Db, "select">;

/** Every live schedule; `lock`: FOR UPDATE, inside the apply's transaction. */
async function liveSchedules(db: Reader, lock: boolean): Promise<Schedule[]> {
  const q = db.select().from(schedules).where(and(isNull(schedules.deletedAt))).orderBy(sql`${schedules.name}`);
  return lock ? q.for("update") : q;
}

/** What the file means against what is stored, when the file's masked secrets keep the stored values. */
export function effectiveSpec(spec: ScheduleSpec, stored: Schedule): ScheduleSpec {
  return { ...spec, payload: restoreMasked(spec.payload, stored.payload) };
}

/** Whether a stored schedule is held paused by a note (apply leaves it paused). */
export const heldPaused = (s: Pick<Schedule, "enabled" | "pausedNote">) => !s.enabled && s.pausedNote !== null;

export async function planApply(db: Reader, specs: ScheduleSpec[], opts: PlanOptions & { lock?: boolean }): Promise<Plan> {
  const stored = new Map((await liveSchedules(db, opts.lock ?? false)).map((s) => [s.name, s]));
  const plan: Plan = { create: [], update: [], unchanged: [], delete: [], keptPaused: [] };
  specs.forEach((raw, index) => {
    const s = stored.get(raw.name);
    if (!s) return void plan.create.push({ index, spec: raw });
    const spec = effectiveSpec(raw, s);
    const kept = heldPaused(s) && spec.enabled;
    if (kept) plan.keptPaused.push({ name: s.name, note: s.pausedNote! });
    const fields = differingFields(specOfRow(s), spec, kept ? ["enabled"] : []);
    if (fields.length === 0) plan.unchanged.push(s.name);
    else plan.update.push({ index, spec, version: s.version, fields });
  });
  if (opts.prune) {
    const listed = new Set(specs.map((s) => s.name));
    for (const s of stored.values()) if (s.managedBy === opts.source && !listed.has(s.name)) plan.delete.push(s.name);
  }
  return plan;
}

export function summarize(plan: Plan): PlanSummary {
  return {
    created: plan.create.map((c) => c.spec.name),
    updated: plan.update.map((u) => u.spec.name),
    deleted: plan.delete,
    unchanged: plan.unchanged,
    keptPaused: plan.keptPaused,
    changes: plan.update.map((u) => ({ name: u.spec.name, version: u.version, fields: u.fields })),
  };
}
