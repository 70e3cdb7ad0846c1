"use client";

import { useQuery } from "@tanstack/react-query";
import { LIVE_REFRESH_MS } from "@/lib/client/api";
import { handlersQuery } from "@/lib/client/schedules";
import { workersQuery } from "@/lib/client/workers";
import { HandlersTable } from "./handlers-table";
import { PageHeader } from "./ui/page-header";
import { EmptyState, ErrorState, Loading } from "./ui/states";
import { Time } from "./ui/time";

const STATUS_STYLE = {
  alive: "bg-emerald-100 text-emerald-800",
  silent: "bg-amber-100 text-amber-800",
  stopped: "bg-slate-100 text-slate-600",
} as const;

/** Live and recently gone workers, their heartbeats, in-flight runs, partitions, and which programs each may run; then the handlers with who serves them and their fleet-wide limits. */
export function WorkersView() {
  const q = useQuery(workersQuery());
  const handlers = useQuery({ ...handlersQuery(), refetchInterval: LIVE_REFRESH_MS });
  return (
    <div>
      <PageHeader title="Workers" description="Worker processes on every machine, live first. A worker that stops heartbeating is shown as silent." />
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => q.refetch()} />
      ) : q.data.workers.length === 0 ? (
        <EmptyState title="No workers have reported in" testId="workers-empty">
          Start one with <code className="rounded bg-slate-100 px-1">npm run worker</code>.
        </EmptyState>
      ) : (
        <div className="relative overflow-x-auto rounded-lg border border-slate-200 bg-white">
          <table className="min-w-full text-sm" data-testid="workers-table">
            <thead className="bg-slate-50 text-left text-xs uppercase text-slate-500">
              <tr>
                <th className="px-4 py-2">Worker</th>
                <th className="px-4 py-2">Host / pid</th>
                <th className="px-4 py-2">Status</th>
                <th className="px-4 py-2">Last heartbeat</th>
                <th className="px-4 py-2">In flight</th>
                <th className="px-4 py-2" title="SLOTKEEPER_QUEUES: each queue's runs held / concurrency, and free slots">Queues</th>
                <th className="px-4 py-2">Partitions</th>
                <th className="px-4 py-2">Handlers</th>
                <th className="px-4 py-2" title="SLOTKEEPER_COMMANDS: the programs this worker's command handler may run">Runs programs</th>
                <th className="px-4 py-2">Started</th>
              </tr>
            </thead>
            <tbody>
              {q.data.workers.map((w) => (
                <tr key={w.id} className="border-t border-slate-100" data-testid="worker-row">
                  <td className="px-4 py-2 font-mono text-xs">{w.id}{w.version ? <div className="text-slate-500">v{w.version}</div> : null}</td>
                  <td className="px-4 py-2 text-xs">{w.hostname} <span className="text-slate-500">/ {w.pid}</span></td>
                  <td className="px-4 py-2">
                    <span className={`rounded-full px-2 py-0.5 text-xs ${STATUS_STYLE[w.status]}`}>{w.status}</span>
                  </td>
                  <td className="px-4 py-2"><Time value={w.lastHeartbeatAt} />{w.stoppedAt ? <div className="text-xs text-slate-500">stopped <Time value={w.stoppedAt} /></div> : null}</td>
                  <td className="px-4 py-2 tabular-nums">{w.inFlight} / {w.concurrency}<div className="text-xs text-slate-500">{w.free} free</div></td>
                  <td className="px-4 py-2 text-xs" data-testid="worker-queues">
                    {(w.queues ?? []).map((q) => (
                      <div key={q.name} className="tabular-nums">
                        <span className="font-mono">{q.name}</span> {q.inFlight} / {q.concurrency} <span className="text-slate-500">({q.free} free)</span>
                      </div>
                    ))}
                  </td>
                  <td className="px-4 py-2 font-mono text-xs">{w.partitions.length ? w.partitions.join(", ") : "—"}</td>
                  <td className="px-4 py-2 text-xs" title={w.handlers.map((h) => h.name).join(", ")} data-testid="worker-handlers">{w.handlers.map((h) => h.name).join(", ") || "—"}</td>
                  <td className="px-4 py-2 text-xs" data-testid="worker-commands">
                    {w.commands === null ? <span className="text-slate-500">no</span> : w.commands === "all" ? "any program (all)" : <span className="font-mono">{w.commands.join(", ")}</span>}
                  </td>
                  <td className="px-4 py-2"><Time value={w.startedAt} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <section className="mt-8" aria-labelledby="handlers-heading">
        <h2 id="handlers-heading" className="mb-1 text-sm font-semibold text-slate-800">Handlers</h2>
        <p className="mb-3 text-sm text-slate-500">
          A run goes only to a live worker serving its handler. A fleet-wide limit caps a handler&apos;s runs at once across every worker (<code className="rounded bg-slate-100 px-1">PUT /api/handlers/&#123;name&#125;/limit</code>).
        </p>
        {handlers.isPending || q.isPending ? (
          <Loading />
        ) : handlers.isError ? (
          <ErrorState error={handlers.error} retry={() => handlers.refetch()} />
        ) : (
          <HandlersTable handlers={handlers.data} workers={q.data?.workers ?? []} />
        )}
      </section>
    </div>
  );
}
