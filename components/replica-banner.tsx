"use client";

import { useQuery } from "@tanstack/react-query";
import { formatDuration } from "@/lib/format/duration";
import { replicaQuery } from "@/lib/client/replica";
import type { ReplicaStatus } from "@/lib/server/replica";

/** What the banner says about the read replica, or null when there is nothing to say. */
export function replicaNotice(r: ReplicaStatus | null | undefined): { title: string; detail: string } | null {
  if (!r || !r.configured || !r.warn) return null;
  if (r.readsFrom === "primary") {
    return { title: "Read replica unavailable.", detail: `${r.reason ?? "The standby does not answer."} Pages show the primary's data.` };
  }
  const lag = r.lagSeconds === null ? "an unknown time" : formatDuration(r.lagSeconds);
  return {
    title: `Read replica ${lag} behind${r.replayPaused ? " (replay paused)" : ""}.`,
    detail: `Pages read from a standby whose data is ${lag} behind the primary: changes made since may not show yet. Changes themselves go to the primary.`,
  };
}

/**
 * On every page while DATABASE_READ_URL's standby lags more than SLOTKEEPER_REPLICA_LAG_WARN_SECONDS,
 * or does not answer (reads then come from the primary). Polls /api/health.
 */
export function ReplicaBanner() {
  const q = useQuery(replicaQuery());
  const notice = replicaNotice(q.data);
  if (!notice) return null;
  return (
    <div role="status" data-testid="replica-banner" className="border-b border-sky-200 bg-sky-50 px-8 py-2 text-sm text-sky-900">
      <strong className="font-medium">{notice.title}</strong> {notice.detail}
    </div>
  );
}
