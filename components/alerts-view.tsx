"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { firingQuery } from "@/lib/client/alerts";
import { AlertsHistory } from "./alerts-history";
import { ChannelsPanel } from "./channels-panel";
import { Badge } from "./ui/badge";
import { Section } from "./ui/field";
import { PageHeader } from "./ui/page-header";
import { ErrorState, Loading } from "./ui/states";
import { Time } from "./ui/time";

/** What fires now (one row per schedule and rule). */
function FiringNow() {
  const q = useQuery(firingQuery());
  return (
    <Section title="Firing now" testId="alerts-firing">
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => q.refetch()} />
      ) : q.data.length === 0 ? (
        <p className="text-sm text-emerald-700" data-testid="alerts-none-firing">Nothing is firing: every schedule is succeeding on time.</p>
      ) : (
        <ul className="divide-y divide-slate-100 text-sm">
          {q.data.map((a) => (
            <li key={`${a.scheduleId}-${a.rule}`} className="flex items-center gap-3 py-2" data-testid="alert-firing">
              <Badge tone={a.rule === "failing" ? "red" : a.rule === "late" ? "amber" : "violet"}>{a.rule}</Badge>
              <Link className="font-medium text-sky-700 hover:underline" href={`/schedules/${encodeURIComponent(a.scheduleName)}`}>{a.scheduleName}</Link>
              <span className="text-slate-500">since <Time value={a.since} /></span>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}

/** The Alerts page: what fires now, where notifications go, and what was sent. */
export function AlertsView() {
  return (
    <div className="space-y-6">
      <PageHeader
        title="Alerts"
        description="Workers check every schedule for silence: late (no success for two intervals), failing (dead runs) and backlogged (a due run waiting too long). One notification when a rule starts or stops holding, and a reminder while it stays bad."
      />
      <FiringNow />
      <ChannelsPanel />
      <AlertsHistory />
    </div>
  );
}
