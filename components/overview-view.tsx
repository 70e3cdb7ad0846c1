"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { overviewQuery } from "@/lib/client/overview";
import { HealthChartsSection } from "./health-charts-section";
import { ScheduleHealthTable } from "./schedule-health-table";
import { PageHeader } from "./ui/page-header";
import { Stat } from "./ui/stat";
import { EmptyState, ErrorState, Loading } from "./ui/states";

/** The Overview: totals, every schedule's health, and health over time. */
export function OverviewView() {
  const q = useQuery(overviewQuery());
  return (
    <div>
      <PageHeader
        title="Overview"
        description="Every schedule's health at a glance: alert on the absence of success, on dead runs, and on a rising oldest-pending age. Ages come from the database clock."
      />
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => q.refetch()} />
      ) : (
        <div className="space-y-8">
          <div className="grid grid-cols-2 gap-4 md:grid-cols-3 lg:grid-cols-6" data-testid="overview-totals">
            <Stat label="Schedules" value={q.data.totals.schedules} testId="total-schedules" />
            <Stat label="Paused" value={q.data.totals.paused} testId="total-paused" />
            <Stat label="Workers alive" value={q.data.totals.workersAlive} tone={q.data.totals.workersAlive === 0 ? "warn" : "default"} testId="total-workers" />
            <Stat label="Pending" value={q.data.totals.pending} testId="total-pending" />
            <Stat label="Running" value={q.data.totals.running} testId="total-running" />
            <Stat label="Dead runs" value={q.data.totals.dead} tone={q.data.totals.dead > 0 ? "bad" : "default"} testId="total-dead" />
          </div>
          {q.data.schedules.length === 0 ? (
            <EmptyState title="No schedules yet" testId="overview-empty">
              <p>
                Create one on the <Link className="underline" href="/schedules/new">new schedule</Link> form or with{" "}
                <code className="rounded bg-slate-100 px-1">POST /api/schedules</code>. Each slot of a schedule becomes one run row, created once
                however many workers tick.
              </p>
            </EmptyState>
          ) : (
            <>
              <ScheduleHealthTable schedules={q.data.schedules} />
              <HealthChartsSection />
            </>
          )}
        </div>
      )}
    </div>
  );
}
