import type { RunView } from "../runs/history";

const hhmm = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });

/**
 * Why a skipped slot did not run, in words: "2 slots 10:15–10:30 coalesced into 10:45",
 * "missed (catch-up: skip)", "too late", "overlap". Null for runs that were not skipped.
 */
export function describeSkip(run: Pick<RunView, "state" | "skipReason" | "scheduledFor" | "skippedUntil" | "skippedCount" | "coalescedInto">, catchUp?: string): string | null {
  if (run.state !== "skipped" && !run.skipReason) return null;
  const n = run.skippedCount ?? 1;
  const range = n > 1 && run.skippedUntil ? `${n} slots ${hhmm(run.scheduledFor)}–${hhmm(run.skippedUntil)}` : n > 1 ? `${n} slots` : "";
  const prefix = range ? `${range} ` : "";
  switch (run.skipReason) {
    case "coalesced":
      return `${prefix}coalesced into ${run.coalescedInto ? hhmm(run.coalescedInto) : "a later slot"}`.trim();
    case "missed":
      return `${prefix}missed (catch-up: ${catchUp ?? "skip"})`.trim();
    case "too_late":
      return `${prefix}too late (past max lateness)`.trim();
    case "overlap":
      return `${prefix}overlap (previous run still going)`.trim();
    case "paused":
      return `${prefix}paused`.trim();
    case "deleted":
      return `${prefix}schedule deleted`.trim();
    case "cancelled":
      return "cancelled by an operator";
    case "discarded":
      return "discarded by an operator";
    default:
      return "skipped";
  }
}

/** What a catch-up policy does after an outage, with docs/schedules.md's 10:02–10:52 example. */
export const CATCH_UP_EXPLAINED = {
  skip: "After an outage, missed slots are skipped; it resumes at the next slot. (15-minute job down 10:02–10:52: 0 runs, next at 11:00.)",
  latest: "After an outage, only the latest missed slot runs, once. (15-minute job down 10:02–10:52: 1 run, for 10:45.)",
  all: "After an outage, every missed slot runs, oldest first. (15-minute job down 10:02–10:52: 3 runs, 10:15, 10:30 and 10:45.)",
} as const;

export const OVERLAP_EXPLAINED = {
  allow: "A slot may start while the previous one is still running.",
  forbid: "A slot waits until the previous run has finished.",
  skip: "A slot whose previous run is still going is skipped (reason: overlap).",
} as const;
