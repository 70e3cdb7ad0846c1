"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { SlotkeeperApiError } from "@/lib/client/api-error";
import { overviewKey } from "@/lib/client/overview";
import { DEFAULT_VALUES, toBody, valuesFromSchedule, type FieldErrors, type FormValues } from "@/lib/client/schedule-form-values";
import { createSchedule, handlersQuery, patchSchedule, scheduleKey, scheduleQuery, schedulesKey, timingPreviewQuery, type Schedule } from "@/lib/client/schedules";
import { useDebounced } from "@/lib/client/use-debounced";
import { ScheduleForm } from "./schedule-form";
import { TimingPreview } from "./timing-preview";
import { Button } from "./ui/button";
import { PageHeader } from "./ui/page-header";
import { ErrorState, Loading } from "./ui/states";

/** Live preview of the timing being typed, from GET /api/timing/preview (debounced). */
function PreviewContainer({ values }: { values: FormValues }) {
  const timing = useDebounced(
    { cron: values.timingKind === "cron" ? values.cron.trim() : undefined, everySeconds: values.timingKind === "interval" ? Number(values.everySeconds) || null : null, timezone: values.timezone.trim() || "UTC" },
    250,
  );
  const q = useQuery({ ...timingPreviewQuery(timing), enabled: !!(timing.cron || timing.everySeconds), placeholderData: (prev) => prev });
  return <TimingPreview preview={q.data} timezone={timing.timezone} loading={q.isFetching} />;
}

function toFieldErrors(err: unknown): FieldErrors {
  if (err instanceof SlotkeeperApiError) return { [err.field ?? "form"]: err.message };
  return { form: err instanceof Error ? err.message : String(err) };
}

/** Create a schedule, or edit one (optimistic: the PATCH names the version it read; 409 means reload). */
export function ScheduleEditor({ name }: { name?: string }) {
  const mode = name ? "edit" : "create";
  const router = useRouter();
  const qc = useQueryClient();
  const handlers = useQuery(handlersQuery());
  // The form edits a snapshot: no polling while editing, or a refetch would look like a reload.
  const existing = useQuery({ ...scheduleQuery(name ?? ""), enabled: !!name, refetchInterval: false, refetchOnWindowFocus: false });
  const [serverErrors, setServerErrors] = useState<FieldErrors>({});
  const [conflict, setConflict] = useState(false);
  const [formKey, setFormKey] = useState(0);
  // A save that succeeded with warnings keeps the form open beside them; the next save edits what was saved.
  const [saved, setSaved] = useState<{ schedule: Schedule; warnings: Record<string, string> } | null>(null);

  const save = useMutation({
    mutationFn: async ({ values, schedule }: { values: FormValues; schedule?: Schedule }) => {
      const body = toBody(values, mode);
      if (!body) throw new SlotkeeperApiError("payload is not valid JSON", 400, "validation", "payload");
      const target = saved?.schedule ?? schedule;
      return target ? patchSchedule(target.name, { ...body, version: target.version }) : createSchedule(body);
    },
    onMutate: () => {
      setServerErrors({});
      setConflict(false);
    },
    onSuccess: async (res, { values }) => {
      const savedName = res.schedule?.name ?? name ?? values.name.trim();
      if (res.schedule) qc.setQueryData(scheduleKey(savedName), res.schedule);
      await Promise.all([qc.invalidateQueries({ queryKey: schedulesKey }), qc.invalidateQueries({ queryKey: overviewKey })]);
      if (res.warnings?.length) {
        setSaved({ schedule: res.schedule, warnings: Object.fromEntries(res.warnings.map((w) => [w.field, w.message])) });
        return;
      }
      router.push(`/schedules/${encodeURIComponent(savedName)}`);
    },
    onError: (err) => {
      if (err instanceof SlotkeeperApiError && err.status === 409 && mode === "edit" && err.field !== "name") setConflict(true);
      else setServerErrors(toFieldErrors(err));
    },
  });

  const reload = async () => {
    await existing.refetch();
    setConflict(false);
    setServerErrors({});
    setFormKey((k) => k + 1);
  };

  const header = <PageHeader title={mode === "create" ? "New schedule" : `Edit ${name}`} description="One slot per fire time, run at least once, with the catch-up policy you choose for outages." />;
  if (mode === "edit" && existing.isPending) return <div>{header}<Loading /></div>;
  if (mode === "edit" && existing.isError) return <div>{header}<ErrorState error={existing.error} retry={() => existing.refetch()} /></div>;
  const schedule = existing.data;
  return (
    <div className="max-w-5xl">
      {header}
      <ScheduleForm
        key={`${formKey}-${schedule?.version ?? 0}`}
        mode={mode}
        initial={schedule ? valuesFromSchedule(schedule) : DEFAULT_VALUES}
        handlers={handlers.data}
        submitting={save.isPending}
        serverErrors={serverErrors}
        serverWarnings={saved?.warnings}
        renderPreview={(v) => <PreviewContainer values={v} />}
        onSubmit={(values) => save.mutate({ values, schedule })}
        onCancel={() => router.push(name ? `/schedules/${encodeURIComponent(name)}` : "/schedules")}
        banner={
          saved && !conflict ? (
            <div role="status" data-testid="saved-with-warnings" className="flex items-center justify-between rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900">
              <span>Saved “{saved.schedule.name}”, with a warning beside the payload. Change it and save again, or open the schedule.</span>
              <Button size="sm" onClick={() => router.push(`/schedules/${encodeURIComponent(saved.schedule.name)}`)} data-testid="open-saved">
                Open schedule
              </Button>
            </div>
          ) : conflict ? (
            <div role="alert" data-testid="conflict-banner" className="flex items-center justify-between rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900">
              <span>This schedule was changed by someone else since you opened it; reload to see their version (your edits here will be replaced).</span>
              <Button size="sm" onClick={reload} data-testid="conflict-reload">
                Reload
              </Button>
            </div>
          ) : null
        }
      />
    </div>
  );
}
