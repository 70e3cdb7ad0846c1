import type { FieldErrors, FormValues } from "@/lib/client/schedule-form-values";
import { CATCH_UP_EXPLAINED, OVERLAP_EXPLAINED } from "@/lib/client/run-labels";
import { Field, inputClass } from "./ui/field";

type Props = { values: FormValues; errors: FieldErrors; set: <K extends keyof FormValues>(k: K, v: FormValues[K]) => void };

const aria = (id: string, error?: string) => ({ id, "aria-invalid": error ? true : undefined, "aria-describedby": error ? `${id}-error` : `${id}-hint` });

function NumberField({ id, label, hint, value, error, onChange, placeholder }: { id: string; label: string; hint?: string; value: string; error?: string; onChange: (v: string) => void; placeholder?: string }) {
  return (
    <Field id={id} label={label} hint={hint} error={error}>
      <input {...aria(id, error)} inputMode="numeric" className={inputClass} value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} data-testid={`input-${id}`} />
    </Field>
  );
}

/** Catch-up, max lateness, jitter, overlap, retry policy, lease and timeout: what happens when things go wrong. */
export function SchedulePolicyFields({ values, errors, set }: Props) {
  return (
    <div className="space-y-5">
      <fieldset>
        <legend className="mb-1 text-sm font-medium text-slate-800">Catch-up policy</legend>
        <div className="flex gap-2" role="radiogroup">
          {(["skip", "latest", "all"] as const).map((p) => (
            <label key={p} className={`cursor-pointer rounded-md border px-3 py-1.5 text-sm has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-slate-500 has-[:focus-visible]:ring-offset-1 ${values.catchUp === p ? "border-slate-900 bg-slate-900 text-white" : "border-slate-300 bg-white text-slate-800 hover:bg-slate-50"}`}>
              <input type="radio" name="catchUp" value={p} checked={values.catchUp === p} onChange={() => set("catchUp", p)} className="sr-only" data-testid={`catch-up-${p}`} />
              {p}
            </label>
          ))}
        </div>
        <p className="mt-1 text-xs text-slate-600" data-testid="catch-up-explanation">{CATCH_UP_EXPLAINED[values.catchUp]}</p>
      </fieldset>
      <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
        <NumberField
          id="maxLatenessSeconds"
          label="Max lateness (seconds)"
          hint="A slot older than this is skipped as too late instead of run. Empty: no limit."
          placeholder="none"
          value={values.maxLatenessSeconds}
          error={errors.maxLatenessSeconds}
          onChange={(v) => set("maxLatenessSeconds", v)}
        />
        <NumberField id="jitterSeconds" label="Jitter (seconds)" hint="Spread each slot's due time by up to this much (0–3600)." value={values.jitterSeconds} error={errors.jitterSeconds} onChange={(v) => set("jitterSeconds", v)} />
        <Field id="overlap" label="Overlap" hint={OVERLAP_EXPLAINED[values.overlap]} error={errors.overlap}>
          <select {...aria("overlap", errors.overlap)} className={inputClass} value={values.overlap} onChange={(e) => set("overlap", e.target.value as FormValues["overlap"])} data-testid="input-overlap">
            <option value="allow">allow</option>
            <option value="forbid">forbid</option>
            <option value="skip">skip</option>
          </select>
        </Field>
        <NumberField id="leaseSeconds" label="Lease (seconds)" hint="A crashed worker's run is taken over after about lease + poll interval." value={values.leaseSeconds} error={errors.leaseSeconds} onChange={(v) => set("leaseSeconds", v)} />
        <NumberField id="timeoutSeconds" label="Timeout (seconds)" hint="An attempt running longer is aborted, recorded timed out and retried (1–86400). Empty: no limit." placeholder="none" value={values.timeoutSeconds} error={errors.timeoutSeconds} onChange={(v) => set("timeoutSeconds", v)} />
        <Field id="queue" label="Queue" hint="Only workers serving this queue (SLOTKEEPER_QUEUES) run it." error={errors.queue}>
          <input {...aria("queue", errors.queue)} className={inputClass} value={values.queue} onChange={(e) => set("queue", e.target.value)} data-testid="input-queue" />
        </Field>
        <NumberField
          id="maxConcurrent"
          label="Max concurrent runs"
          hint="At most this many of its runs at once, across all workers. Empty: no limit."
          placeholder="no limit"
          value={values.maxConcurrent}
          error={errors.maxConcurrent}
          onChange={(v) => set("maxConcurrent", v)}
        />
      </div>
      <fieldset>
        <legend className="mb-1 text-sm font-medium text-slate-800">Retry policy</legend>
        <div className="grid grid-cols-1 gap-4 md:grid-cols-3">
          <NumberField id="retry.maxAttempts" label="Max attempts" value={values.retryMaxAttempts} error={errors["retry.maxAttempts"]} onChange={(v) => set("retryMaxAttempts", v)} />
          <NumberField id="retry.baseSeconds" label="Backoff base (s)" value={values.retryBaseSeconds} error={errors["retry.baseSeconds"]} onChange={(v) => set("retryBaseSeconds", v)} />
          <NumberField id="retry.capSeconds" label="Backoff cap (s)" value={values.retryCapSeconds} error={errors["retry.capSeconds"]} onChange={(v) => set("retryCapSeconds", v)} />
        </div>
        <p className="mt-1 text-xs text-slate-500">Full jitter: attempt n waits a random time up to min(cap, base × 2ⁿ⁻¹) — 30, 60, 120, 240, 480, 900 s with base 30 and cap 900. After the last attempt the run is dead.</p>
      </fieldset>
      <fieldset>
        <legend className="mb-1 text-sm font-medium text-slate-800">Health alerts</legend>
        <div className="grid grid-cols-1 gap-4 md:grid-cols-3">
          <NumberField id="lateAfterSeconds" label="Late after (s)" hint="No success for longer than this is late. Empty: two intervals + grace." placeholder="default" value={values.lateAfterSeconds} error={errors.lateAfterSeconds} onChange={(v) => set("lateAfterSeconds", v)} />
          <NumberField id="lateGraceSeconds" label="Late grace (s)" hint="Added to two intervals when Late after is empty. Empty: 30." placeholder="default" value={values.lateGraceSeconds} error={errors.lateGraceSeconds} onChange={(v) => set("lateGraceSeconds", v)} />
          <NumberField id="backlogAfterSeconds" label="Backlogged after (s)" hint="A due run waiting longer is a backlog. Empty: one interval, at least 60." placeholder="default" value={values.backlogAfterSeconds} error={errors.backlogAfterSeconds} onChange={(v) => set("backlogAfterSeconds", v)} />
        </div>
      </fieldset>
    </div>
  );
}
