"use client";

import { UnservedNotice } from "./unserved-notice";
import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCanOperate } from "@/lib/client/me";
import { overviewKey } from "@/lib/client/overview";
import { describeSkip } from "@/lib/client/run-labels";
import { requeueRun, runQuery, runsKey } from "@/lib/client/runs";
import { schedulesKey } from "@/lib/client/schedules";
import { AttemptsTimeline } from "./attempts-timeline";
import { RunSettle } from "./run-settle";
import { StuckBadge } from "./stuck-badge";
import { RunStateBadge } from "./ui/badge";
import { Button } from "./ui/button";
import { Section } from "./ui/field";
import { PageHeader } from "./ui/page-header";
import { ErrorState, Loading } from "./ui/states";
import { Time } from "./ui/time";

function Item({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-xs uppercase tracking-wide text-slate-500">{label}</dt>
      <dd className="mt-0.5 text-sm text-slate-900">{children}</dd>
    </div>
  );
}

/** One run: its slot, state, idempotency key and every attempt across retries and workers. */
export function RunDetailView({ id }: { id: number }) {
  const qc = useQueryClient();
  const q = useQuery(runQuery(id));
  const canOperate = useCanOperate();
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: runsKey }), qc.invalidateQueries({ queryKey: overviewKey }), qc.invalidateQueries({ queryKey: schedulesKey })]);
  const requeue = useMutation({ mutationFn: () => requeueRun(id), onSuccess: refresh });
  if (q.isPending) return <div><PageHeader title={`Run #${id}`} /><Loading /></div>;
  if (q.isError) return <div><PageHeader title={`Run #${id}`} /><ErrorState error={q.error} retry={() => q.refetch()} /></div>;
  const r = q.data;
  const skip = describeSkip(r);
  return (
    <div className="space-y-6">
      <PageHeader
        title={`Run #${r.id}`}
        description={`Slot of ${r.scheduleName}${r.scheduleDeleted ? " (deleted schedule)" : ""}, created by ${r.origin.replace("_", "-")}.`}
        actions={
          canOperate && r.state === "dead" ? (
            <div className="flex flex-wrap items-center gap-2">
              <Button variant="primary" onClick={() => requeue.mutate()} disabled={requeue.isPending} data-testid="requeue-run">Re-queue</Button>
              <RunSettle id={r.id} action="discard" onDone={refresh} />
            </div>
          ) : canOperate && r.state === "pending" && !r.leaseOwner ? (
            <RunSettle id={r.id} action="cancel" onDone={refresh} />
          ) : undefined
        }
      />
      {requeue.isError ? <ErrorState error={requeue.error} /> : null}
      <UnservedNotice unserved={r.unservedHandler} />
      <Section title="Slot">
        <dl className="grid grid-cols-2 gap-4 md:grid-cols-4" data-testid="run-summary">
          <Item label="State"><span className="inline-flex flex-wrap items-center gap-1"><RunStateBadge state={r.state} /><StuckBadge stuck={r.stuck} since={r.stuckSince} /></span></Item>
          <Item label="Schedule">
            {r.scheduleDeleted ? r.scheduleName : <Link className="underline" href={`/schedules/${encodeURIComponent(r.scheduleName)}`}>{r.scheduleName}</Link>}
          </Item>
          <Item label="Slot"><Time value={r.scheduledFor} /></Item>
          <Item label="Due (slot + jitter)"><Time value={r.dueAt} /></Item>
          <Item label="Next try after"><Time value={r.state === "pending" ? r.runAfter : null} /></Item>
          <Item label="Attempts (fencing token)"><span className="tabular-nums">{r.attempts} of {r.maxAttempts}</span></Item>
          <Item label="Lease">{r.leaseOwner ? <>{r.leaseOwner} until <Time value={r.leaseExpiresAt} /></> : "—"}</Item>
          <Item label="Finished"><Time value={r.finishedAt} /></Item>
          <div className="col-span-2 md:col-span-4">
            <dt className="text-xs uppercase tracking-wide text-slate-500">Idempotency key</dt>
            <dd className="mt-0.5"><code className="select-all rounded bg-slate-100 px-2 py-1 font-mono text-sm" data-testid="idempotency-key">{r.idempotencyKey}</code>
              <span className="ml-2 text-xs text-slate-500">the same on every attempt; handlers use it to make a repeat harmless</span>
            </dd>
          </div>
          {r.payloadOverride ? (
            <div className="col-span-2 md:col-span-4">
              <dt className="text-xs uppercase tracking-wide text-slate-500">Payload of this run (in place of the schedule&apos;s)</dt>
              <dd><pre className="mt-1 max-h-40 overflow-auto rounded bg-slate-50 p-2 font-mono text-xs" data-testid="run-payload-override">{JSON.stringify(r.payloadOverride, null, 2)}</pre></dd>
            </div>
          ) : null}
          {skip ? <div className="col-span-2 md:col-span-4"><Item label="Skipped because">{skip}</Item></div> : null}
          {r.lastError ? (
            <div className="col-span-2 md:col-span-4">
              <dt className="text-xs uppercase tracking-wide text-slate-500">Last error</dt>
              <dd><pre className="mt-1 whitespace-pre-wrap break-words rounded bg-red-50 p-2 font-mono text-xs text-red-800">{r.lastError}</pre></dd>
            </div>
          ) : null}
        </dl>
      </Section>
      <Section title={`Attempts (${r.attemptsList.length})`}>
        <AttemptsTimeline attempts={r.attemptsList} />
      </Section>
    </div>
  );
}
