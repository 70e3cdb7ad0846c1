import type { ReactNode } from "react";

/** Shown while a query has no data yet. */
export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div role="status" aria-live="polite" className="rounded-lg border border-slate-200 bg-white p-6 text-sm text-slate-500">
      {label}
    </div>
  );
}

/** Shown when a query failed; the message is rendered as text. */
export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div role="alert" className="rounded-lg border border-red-200 bg-red-50 p-6 text-sm text-red-800">
      <p className="font-medium">Could not load this view.</p>
      <p className="mt-1">{message}</p>
      {retry ? (
        <button type="button" onClick={retry} className="mt-3 rounded-md border border-red-300 bg-white px-3 py-1 text-red-800 hover:bg-red-100">
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** Shown when there is nothing to list yet, with what to do about it. */
export function EmptyState({ title, children, testId }: { title: string; children?: ReactNode; testId?: string }) {
  return (
    <div data-testid={testId} className="rounded-lg border border-dashed border-slate-300 bg-white p-10 text-center">
      <p className="font-medium text-slate-800">{title}</p>
      {children ? <div className="mt-2 text-sm text-slate-600">{children}</div> : null}
    </div>
  );
}
