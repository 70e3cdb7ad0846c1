import type { ReactNode } from "react";

/** Shared classes for text inputs, selects and textareas. */
export const inputClass =
  "block w-full rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm text-slate-900 shadow-sm placeholder:text-slate-500 focus:border-slate-500 focus:outline-none focus:ring-2 focus:ring-slate-200 aria-[invalid=true]:border-red-400 aria-[invalid=true]:ring-red-100";

/**
 * A labelled form field with a hint and an inline error. The control must carry `id={id}`,
 * `aria-invalid` and `aria-describedby={`${id}-error`}` so screen readers read the error.
 */
export function Field({ id, label, hint, error, warning, children, className = "" }: { id: string; label: string; hint?: ReactNode; error?: string; warning?: string; children: ReactNode; className?: string }) {
  return (
    <div className={className}>
      <label htmlFor={id} className="mb-1 block text-sm font-medium text-slate-800">
        {label}
      </label>
      {children}
      {error ? (
        <p id={`${id}-error`} role="alert" data-testid={`error-${id}`} className="mt-1 text-xs text-red-700">
          {error}
        </p>
      ) : null}
      {warning ? (
        <p id={`${id}-warning`} role="status" data-testid={`warning-${id}`} className="mt-1 rounded border border-amber-300 bg-amber-50 px-2 py-1 text-xs text-amber-900">
          {warning}
        </p>
      ) : null}
      {!error && hint ? (
        <p id={`${id}-hint`} className="mt-1 text-xs text-slate-500">
          {hint}
        </p>
      ) : null}
    </div>
  );
}

/** A titled section of a form or detail page. */
export function Section({ title, children, actions, testId }: { title: string; children: ReactNode; actions?: ReactNode; testId?: string }) {
  return (
    <section data-testid={testId} className="rounded-lg border border-slate-200 bg-white">
      <div className="flex items-center justify-between border-b border-slate-100 px-4 py-3">
        <h2 className="text-sm font-semibold text-slate-800">{title}</h2>
        {actions}
      </div>
      <div className="p-4">{children}</div>
    </section>
  );
}
