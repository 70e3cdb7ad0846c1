import type { ReactNode } from "react";
import type { Schedule } from "@/lib/client/schedules";
import { CATCH_UP_EXPLAINED } from "@/lib/client/run-labels";
import { TagList } from "./schedule-tags";
import { StatusBadge } from "./ui/badge";
import { StuckBadge } from "./stuck-badge";
import { Section } from "./ui/field";
import { Stat } from "./ui/stat";
import { Time, formatDuration } from "./ui/time";

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="grid grid-cols-3 gap-2 py-1.5">
      <dt className="text-slate-500">{label}</dt>
      <dd className="col-span-2 text-slate-900">{children}</dd>
    </div>
  );
}

/** A schedule's health numbers and its stated worst-case lateness. */
export function ScheduleHealthStats({ schedule: s }: { schedule: Schedule }) {
  return (
    <div className="grid grid-cols-2 gap-4 lg:grid-cols-5" data-testid="schedule-health">
      <div className="rounded-lg border border-slate-200 bg-white p-4">
        <div className="text-xs uppercase tracking-wide text-slate-500">Status</div>
        <div className="mt-2 flex flex-wrap items-center gap-1"><StatusBadge status={s.status ?? (s.enabled ? undefined : "paused")} /><StuckBadge stuck={s.stuck} since={s.stuckSince} testId="schedule-stuck" /></div>
      </div>
      <Stat label="Since last success" value={s.sinceLastSuccessSeconds === null ? "never" : formatDuration(s.sinceLastSuccessSeconds)} tone={s.status === "late" ? "warn" : "default"} testId="health-since" />
      <Stat label="Dead runs" value={s.deadRuns ?? "—"} tone={(s.deadRuns ?? 0) > 0 ? "bad" : "default"} testId="health-dead" />
      <Stat label="Oldest pending" value={formatDuration(s.oldestPendingAgeSeconds)} tone={s.status === "backlogged" ? "warn" : "default"} testId="health-pending" />
      <Stat label="Worst-case lateness" value={formatDuration(s.worstCaseLatenessSeconds)} testId="worst-case-lateness" />
    </div>
  );
}

/** The configuration as saved. */
export function ScheduleConfig({ schedule: s }: { schedule: Schedule }) {
  return (
    <Section title="Configuration" testId="schedule-config">
      <dl className="divide-y divide-slate-100 text-sm">
        <Row label="Handler"><span className="font-mono">{s.handler}</span></Row>
        <Row label="Owner"><span data-testid="config-owner">{s.owner ?? "nobody named"}</span></Row>
        <Row label="Tags">{s.tags?.length ? <TagList tags={s.tags} testId="config-tags" /> : <span className="text-slate-500">none</span>}</Row>
        <Row label="Timing">
          <span className="font-mono" data-testid="config-timing">{s.cron ?? `every ${s.everySeconds}s`}</span> <span className="text-slate-500">({s.timezone})</span>
        </Row>
        <Row label="Catch-up">
          <span data-testid="config-catch-up">{s.catchUp}</span>
          <p className="text-xs text-slate-500">{CATCH_UP_EXPLAINED[s.catchUp]}</p>
        </Row>
        <Row label="Max lateness"><span data-testid="config-max-lateness">{s.maxLatenessSeconds === null ? "none" : `${s.maxLatenessSeconds}s`}</span></Row>
        <Row label="Jitter">{s.jitterSeconds}s</Row>
        <Row label="Overlap">{s.overlap}</Row>
        <Row label="Queue"><span className="font-mono" data-testid="config-queue">{s.queue}</span></Row>
        <Row label="Max concurrent">
          <span data-testid="config-max-concurrent">{s.maxConcurrent != null ? `${s.maxConcurrent} at once` : s.overlap === "allow" ? "no limit" : `1 at once (overlap ${s.overlap})`}</span>
        </Row>
        <Row label="Retry">
          {s.retry.maxAttempts} attempts, backoff {s.retry.baseSeconds}s → {s.retry.capSeconds}s
        </Row>
        <Row label="Lease">{s.leaseSeconds}s</Row>
        <Row label="Timeout"><span data-testid="config-timeout">{s.timeoutSeconds == null ? "none" : `${s.timeoutSeconds}s`}</span></Row>
        <Row label="Late after">{s.lateAfterSeconds ? formatDuration(s.lateAfterSeconds) : "two intervals + grace"}</Row>
        <Row label="Next slot"><Time value={s.enabled ? s.nextSlotAt : null} fallback={s.enabled ? "never" : "paused"} /></Row>
        <Row label="Payload">
          <pre className="max-h-40 overflow-auto rounded bg-slate-50 p-2 font-mono text-xs">{JSON.stringify(s.payload, null, 2)}</pre>
        </Row>
        <Row label="Updated"><Time value={s.updatedAt} /> · version {s.version}</Row>
      </dl>
    </Section>
  );
}
