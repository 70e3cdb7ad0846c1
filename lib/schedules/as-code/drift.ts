/**
 * Drift: a schedule managed by a file whose stored settings differ from the body last applied
 * (`managed_spec`), after an edit through the API or the console. A schedule paused by hand with
 * a note is not drifted on `enabled` (an apply leaves it paused too).
 */
import type { Schedule } from "../../db/schema";
import { differingFields, specOfRow, withAddedFields, type ScheduleSpec } from "./spec";

export function driftedFields(row: Schedule): string[] {
  if (!row.managedSpec) return [];
  const held = !row.enabled && row.pausedNote != null;
  return differingFields(specOfRow(row), withAddedFields(row.managedSpec as ScheduleSpec), held ? ["enabled"] : []);
}
