"use client";

import Link from "next/link";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { alertEventsQuery, type AlertEventView, type HistoryFilterValues } from "@/lib/client/alerts";
import { Badge, type Tone } from "./ui/badge";
import { Button } from "./ui/button";
import { inputClass, Section } from "./ui/field";
import { EmptyState, ErrorState, Loading } from "./ui/states";
import { formatDuration, Time } from "./ui/time";

const KIND_TONE: Record<string, Tone> = { firing: "red", reminder: "amber", resolved: "green" };
const DELIVERY_TONE: Record<string, Tone> = { pending: "blue", delivered: "green", failed: "red" };

/** The numbers an event recorded, in one line. */
function numbers(e: AlertEventView): string {
  const d = e.details;
  const since = d.sinceLastSuccessSeconds === null ? "never" : formatDuration(d.sinceLastSuccessSeconds);
  return `since success ${since} · dead ${d.deadRuns} · oldest pending ${formatDuration(d.oldestPendingAgeSeconds)}`;
}

/** Alert history, newest first, filtered by schedule, rule and kind, with each delivery's state and error. */
export function AlertsHistory() {
  const [filters, setFilters] = useState<HistoryFilterValues>({ schedule: "", rule: "", kind: "" });
  const [pages, setPages] = useState<(number | null)[]>([null]);
  const before = pages[pages.length - 1];
  const q = useQuery({ ...alertEventsQuery(filters, before), placeholderData: keepPreviousData });
  const set = (k: keyof HistoryFilterValues, v: string) => {
    setFilters((f) => ({ ...f, [k]: v }));
    setPages([null]);
  };

  // inputClass is full width: each control sits in a fixed-width box so the bar stays one row.
  const filterBar = (
    <div className="flex flex-wrap gap-2" data-testid="alert-filters">
      <div className="w-44">
        <input aria-label="Schedule" placeholder="schedule name" className={inputClass} value={filters.schedule} onChange={(e) => set("schedule", e.target.value)} />
      </div>
      <div className="w-36">
        <select aria-label="Rule" className={inputClass} value={filters.rule} onChange={(e) => set("rule", e.target.value)} data-testid="filter-rule">
          <option value="">any rule</option>
          <option value="late">late</option>
          <option value="failing">failing</option>
          <option value="backlogged">backlogged</option>
          <option value="unserved">unserved</option>
          <option value="stuck">stuck</option>
        </select>
      </div>
      <div className="w-36">
        <select aria-label="Kind" className={inputClass} value={filters.kind} onChange={(e) => set("kind", e.target.value)} data-testid="filter-kind">
          <option value="">any kind</option>
          <option value="firing">firing</option>
          <option value="reminder">reminder</option>
          <option value="resolved">resolved</option>
        </select>
      </div>
    </div>
  );

  return (
    <Section title="History" actions={filterBar} testId="alert-history">
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => q.refetch()} />
      ) : q.data.events.length === 0 ? (
        <EmptyState title="No alerts" testId="alerts-empty">
          Workers evaluate the rules every few seconds; a schedule that goes late, fails or backs up shows here.
        </EmptyState>
      ) : (
        <>
          <div className="relative overflow-x-auto">
          <table className="min-w-full text-sm" data-testid="alert-events">
            <thead className="text-left text-xs uppercase text-slate-500">
              <tr>
                <th className="py-2 pr-4">When</th>
                <th className="py-2 pr-4">Schedule</th>
                <th className="py-2 pr-4">Rule</th>
                <th className="py-2 pr-4">Numbers</th>
                <th className="py-2">Deliveries</th>
              </tr>
            </thead>
            <tbody>
              {q.data.events.map((e) => (
                <tr key={e.id} className="border-t border-slate-100 align-top" data-testid="alert-event">
                  <td className="py-2 pr-4"><Time value={e.at} /></td>
                  <td className="py-2 pr-4">
                    {e.details.status === "deleted" ? e.scheduleName : <Link className="text-sky-700 hover:underline" href={`/schedules/${encodeURIComponent(e.scheduleName)}`}>{e.scheduleName}</Link>}
                  </td>
                  <td className="py-2 pr-4">
                    <span className="mr-2">{e.rule}</span>
                    <Badge tone={KIND_TONE[e.kind] ?? "slate"} testId="alert-kind">{e.kind}</Badge>
                  </td>
                  <td className="py-2 pr-4 text-xs text-slate-600">{numbers(e)}</td>
                  <td className="py-2">
                    {e.deliveries.length === 0 ? (
                      <span className="text-xs text-slate-500">no channel</span>
                    ) : (
                      <ul className="space-y-1">
                        {e.deliveries.map((d) => (
                          <li key={d.channelId} className="text-xs" data-testid="alert-delivery">
                            <span className="mr-1 font-medium">{d.channelName}</span>
                            <Badge tone={DELIVERY_TONE[d.state] ?? "slate"}>{d.state}</Badge>
                            {d.attempts > 1 ? <span className="ml-1 text-slate-500">after {d.attempts} attempts</span> : null}
                            {d.lastError ? <p className="text-red-700" title={d.lastError}>{d.lastError}</p> : null}
                            {d.state === "pending" && d.attempts > 0 ? <p className="text-slate-500">next try <Time value={d.nextAttemptAt} /></p> : null}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          </div>
          <div className="mt-3 flex gap-2">
            {pages.length > 1 ? <Button size="sm" onClick={() => setPages((p) => p.slice(0, -1))}>Newer</Button> : null}
            {q.data.nextBefore ? <Button size="sm" onClick={() => setPages((p) => [...p, q.data.nextBefore])} data-testid="alerts-older">Older</Button> : null}
          </div>
        </>
      )}
    </Section>
  );
}
