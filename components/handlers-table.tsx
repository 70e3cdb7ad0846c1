import type { HandlerListing } from "@/lib/client/schedules";
import type { WorkerView } from "@/lib/workers/queries";

/**
 * Every handler a schedule may name, how many live workers serve it, and its fleet-wide
 * concurrency limit (PUT /api/handlers/{name}/limit): at most that many of its runs at once across
 * every worker, whatever their queues and concurrency.
 */
export function HandlersTable({ handlers, workers }: { handlers: HandlerListing[]; workers: WorkerView[] }) {
  const live = workers.filter((w) => w.status === "alive");
  return (
    <div className="relative overflow-x-auto rounded-lg border border-slate-200 bg-white">
      <table className="min-w-full text-sm" data-testid="handlers-table">
        <thead className="bg-slate-50 text-left text-xs uppercase text-slate-500">
          <tr>
            <th className="px-4 py-2">Handler</th>
            <th className="px-4 py-2" title="Live workers that serve it: only they claim its runs">Served by</th>
            <th className="px-4 py-2" title="PUT /api/handlers/{name}/limit: at most this many of its runs at once across every worker">Fleet-wide limit</th>
          </tr>
        </thead>
        <tbody>
          {handlers.map((h) => {
            const serving = live.filter((w) => w.handlers.some((x) => x.name === h.name)).length;
            return (
              <tr key={h.name} className="border-t border-slate-100" data-testid="handler-row" data-handler={h.name}>
                <td className="px-4 py-2 font-mono text-xs">{h.name}</td>
                <td className={`px-4 py-2 text-xs ${serving === 0 ? "text-amber-800" : ""}`} data-testid="handler-served-by">
                  {serving === 0 ? "no live worker" : `${serving} live worker${serving === 1 ? "" : "s"}`}
                </td>
                <td className="px-4 py-2 tabular-nums" data-testid="handler-limit">
                  {h.maxConcurrent === null ? <span className="text-slate-500">none</span> : `${h.maxConcurrent} at once`}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
