"use client";

import { useState } from "react";
import { useMutation } from "@tanstack/react-query";
import { Button } from "./ui/button";

type Counted = { matched: number; changed: number | string[]; remaining: number };

type BulkActionProps = {
  label: string;
  verb: string;
  noun: string;
  /** Count (dryRun) or do it; `note` is what the operator typed in the note field, when there is one. */
  run: (dryRun: boolean, note?: string) => Promise<Counted>;
  onDone: (message: string) => unknown;
  testId: string;
  /** Offer an optional note beside the confirm button, labelled with this. */
  noteLabel?: string;
};

/**
 * A bulk action over everything a filter matches, done by the server: the first click asks it to
 * count (a dry run), the second does it. The count is what the server found, not what the page shows.
 */
export function BulkAction({ label, verb, noun, run, onDone, testId, noteLabel }: BulkActionProps) {
  const [counted, setCounted] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState("");
  const count = useMutation({ mutationFn: () => run(true), onSuccess: (r) => setCounted(r.matched), onError: (e) => setError(e.message) });
  const act = useMutation({
    mutationFn: () => run(false, note.trim() || undefined),
    onSuccess: async (r) => {
      setCounted(null);
      setNote("");
      const n = typeof r.changed === "number" ? r.changed : r.changed.length;
      await onDone(`${verb} ${n} ${noun}${n === 1 ? "" : "s"}${r.remaining ? `; ${r.remaining} more match: run it again` : ""}.`);
    },
    onError: (e) => setError(e.message),
  });
  if (counted === null) {
    return (
      <span className="inline-flex items-center gap-2">
        <Button size="sm" disabled={count.isPending} onClick={() => { setError(null); count.mutate(); }} data-testid={testId}>{label}</Button>
        {error ? <span role="alert" className="text-xs text-red-700">{error}</span> : null}
      </span>
    );
  }
  return (
    <span className="inline-flex items-center gap-2 text-sm" data-testid={`${testId}-confirm-box`}>
      <span data-testid={`${testId}-count`}>{counted} {noun}{counted === 1 ? "" : "s"} match.</span>
      {noteLabel ? (
        <input className="rounded-md border border-slate-300 px-2 py-1 text-sm" placeholder={noteLabel} aria-label={noteLabel} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} data-testid={`${testId}-note`} />
      ) : null}
      <Button size="sm" variant="danger" disabled={counted === 0 || act.isPending} onClick={() => act.mutate()} data-testid={`${testId}-confirm`}>{verb} {counted}</Button>
      <Button size="sm" variant="ghost" onClick={() => setCounted(null)}>Cancel</Button>
    </span>
  );
}
