"use client";

import { useMemo, useState, type FormEvent, type ReactNode } from "react";
import type { HandlerInfo } from "@/lib/client/schedules";
import { validateValues, type FieldErrors, type FormValues } from "@/lib/client/schedule-form-values";
import { SchedulePolicyFields } from "./schedule-policy-fields";
import { Button } from "./ui/button";
import { Field, Section, inputClass } from "./ui/field";

type Props = {
  mode: "create" | "edit";
  initial: FormValues;
  handlers: HandlerInfo[] | undefined;
  submitting: boolean;
  /** Errors from the API's 400 response, keyed by its `field`; "form" for ones without. */
  serverErrors: FieldErrors;
  /** Warnings from a save that succeeded, keyed by field (e.g. "payload.url"): shown beside the field. */
  serverWarnings?: Record<string, string>;
  /** Shown above the buttons, e.g. the 409 "changed by someone else" notice. */
  banner?: ReactNode;
  renderPreview: (v: FormValues) => ReactNode;
  onSubmit: (v: FormValues) => void;
  onCancel: () => void;
};

const ZONES: string[] = (() => {
  try {
    const z = Intl.supportedValuesOf("timeZone");
    return z.includes("UTC") ? z : ["UTC", ...z];
  } catch {
    return ["UTC"];
  }
})();

const aria = (id: string, error?: string) => ({ id, "aria-invalid": error ? true : undefined, "aria-describedby": error ? `${id}-error` : `${id}-hint` });

/**
 * The schedule form. Holds what is typed; validates it live with the API's own rules and shows
 * each field's error beside it (timing and payload as you type, the rest once touched or on save).
 */
export function ScheduleForm({ mode, initial, handlers, submitting, serverErrors, serverWarnings = {}, banner, renderPreview, onSubmit, onCancel }: Props) {
  const [values, setValues] = useState<FormValues>(initial);
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [tried, setTried] = useState(false);
  const clientErrors = useMemo(() => validateValues(values, mode), [values, mode]);
  const live = new Set(["cron", "everySeconds", "timezone", "payload"]);
  const errors: FieldErrors = {};
  for (const [k, msg] of Object.entries(clientErrors)) if (tried || live.has(k) || touched.has(k)) errors[k] = msg;
  for (const [k, msg] of Object.entries(serverErrors)) if (!errors[k]) errors[k] = msg;
  // A handler's payload rule names a field inside the payload (payload.args): shown at the payload.
  for (const [k, msg] of Object.entries(errors)) if (k.startsWith("payload.") && !errors.payload) errors.payload = msg;

  const set = <K extends keyof FormValues>(k: K, v: FormValues[K]) => {
    setValues((prev) => ({ ...prev, [k]: v }));
    const field = k.startsWith("retry") ? `retry.${k[5].toLowerCase()}${k.slice(6)}` : k;
    setTouched((prev) => (prev.has(field) ? prev : new Set(prev).add(field)));
  };
  const handlerOptions = useMemo(() => {
    const list = handlers ?? [];
    return list.some((h) => h.name === values.handler) ? list : [...list, { name: values.handler, idempotent: true, description: "(not registered by any live worker)" }];
  }, [handlers, values.handler]);
  const handler = handlerOptions.find((h) => h.name === values.handler);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (Object.keys(clientErrors).length === 0) onSubmit(values);
  };

  return (
    <form onSubmit={submit} noValidate className="space-y-6" data-testid="schedule-form" aria-label={mode === "create" ? "New schedule" : "Edit schedule"}>
      <Section title="What runs">
        <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
          <Field id="name" label="Name" hint={mode === "edit" ? "Names are fixed once created." : "Letters, digits, spaces and . _ : -"} error={errors.name}>
            <input {...aria("name", errors.name)} className={inputClass} value={values.name} disabled={mode === "edit"} onChange={(e) => set("name", e.target.value)} data-testid="input-name" autoFocus={mode === "create"} />
          </Field>
          <Field id="handler" label="Handler" hint={handler?.description} error={errors.handler}>
            <select {...aria("handler", errors.handler)} className={inputClass} value={values.handler} onChange={(e) => set("handler", e.target.value)} data-testid="input-handler">
              {handlerOptions.map((h) => (
                <option key={h.name} value={h.name}>
                  {h.name}
                  {h.idempotent ? "" : " (not idempotent)"}
                </option>
              ))}
            </select>
          </Field>
          {handler && !handler.idempotent ? (
            <p role="note" data-testid="handler-warning" className="md:col-span-2 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900">
              This job may run twice. Delivery is at-least-once: a worker can crash after the side effect and before recording success. “{handler.name}” does not declare
              itself idempotent, so make it use the idempotency key it is given.
            </p>
          ) : null}
          <Field id="tags" label="Tags" hint="Separated by commas or spaces; alert channels and API tokens can be limited to tags." error={errors.tags}>
            <input {...aria("tags", errors.tags)} className={inputClass} value={values.tags} onChange={(e) => set("tags", e.target.value)} data-testid="input-tags" spellCheck={false} autoComplete="off" />
          </Field>
          <Field id="owner" label="Owner" hint="The team or person who answers for this job." error={errors.owner}>
            <input {...aria("owner", errors.owner)} className={inputClass} value={values.owner} onChange={(e) => set("owner", e.target.value)} data-testid="input-owner" autoComplete="off" />
          </Field>
          <Field id="payload" label="Payload (JSON object)" hint="Passed to the handler on every attempt." error={errors.payload} warning={serverWarnings["payload.url"] ?? serverWarnings.payload} className="md:col-span-2">
            <textarea {...aria("payload", errors.payload)} className={`${inputClass} font-mono`} rows={5} spellCheck={false} value={values.payload} onChange={(e) => set("payload", e.target.value)} data-testid="input-payload" />
          </Field>
        </div>
      </Section>

      <Section title="When">
        <div className="grid grid-cols-1 gap-6 lg:grid-cols-2">
          <div className="space-y-4">
            <fieldset>
              <legend className="mb-1 text-sm font-medium text-slate-800">Timing</legend>
              <div className="flex gap-4 text-sm">
                <label className="flex items-center gap-1.5">
                  <input type="radio" name="timingKind" checked={values.timingKind === "cron"} onChange={() => set("timingKind", "cron")} data-testid="timing-cron" /> Cron expression
                </label>
                <label className="flex items-center gap-1.5">
                  <input type="radio" name="timingKind" checked={values.timingKind === "interval"} onChange={() => set("timingKind", "interval")} data-testid="timing-interval" /> Fixed interval
                </label>
              </div>
            </fieldset>
            {values.timingKind === "cron" ? (
              <Field id="cron" label="Cron expression" hint="5 fields, or 6 with seconds first; @hourly, @daily… allowed." error={errors.cron}>
                <input {...aria("cron", errors.cron)} className={`${inputClass} font-mono`} value={values.cron} onChange={(e) => set("cron", e.target.value)} data-testid="input-cron" spellCheck={false} />
              </Field>
            ) : (
              <Field id="everySeconds" label="Every (seconds)" hint="Slots at multiples of this since the Unix epoch, so they never drift." error={errors.everySeconds}>
                <input {...aria("everySeconds", errors.everySeconds)} inputMode="numeric" className={inputClass} value={values.everySeconds} onChange={(e) => set("everySeconds", e.target.value)} data-testid="input-everySeconds" />
              </Field>
            )}
            <Field id="timezone" label="Time zone" hint="Type to search the IANA zones." error={errors.timezone}>
              <input {...aria("timezone", errors.timezone)} list="timezones" className={inputClass} value={values.timezone} onChange={(e) => set("timezone", e.target.value)} data-testid="input-timezone" autoComplete="off" />
              <datalist id="timezones">
                {ZONES.map((z) => (
                  <option key={z} value={z} />
                ))}
              </datalist>
            </Field>
            <label className="flex items-center gap-2 text-sm">
              <input type="checkbox" checked={values.enabled} onChange={(e) => set("enabled", e.target.checked)} data-testid="input-enabled" /> Enabled (unchecked: saved paused)
            </label>
          </div>
          {renderPreview(values)}
        </div>
      </Section>

      <Section title="When things go wrong">
        <SchedulePolicyFields values={values} errors={errors} set={set} />
      </Section>

      {errors.form || errors.body ? (
        <p role="alert" data-testid="form-error" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
          {errors.form ?? errors.body}
        </p>
      ) : null}
      {banner}
      <div className="flex gap-2">
        <Button type="submit" variant="primary" disabled={submitting} data-testid="save-schedule">
          {submitting ? "Saving…" : mode === "create" ? "Create schedule" : "Save changes"}
        </Button>
        <Button variant="ghost" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
