"use client";

import { useState } from "react";
import { useMutation } from "@tanstack/react-query";
import { Button } from "./ui/button";

type Counted = { matched: number; changed: number | string[]; remaining: number };

/**
 * A bulk action over everything a filter matches, done by the server: the first click asks it to
 * count (a dry run), the second does it. The count is what the server found, not what the page shows.
 */
export function BulkAction({ label, verb, noun, run, onDone, testId }: { label: string; verb: string; noun: string; run: (dryRun: boolean) => Promise<Counted>; onDone: (message: string) => unknown; testId: string }) {
  const [counted, setCounted] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const count = useMutation({ mutationFn: () => run(true), onSuccess: (r) => setCounted(r.matched), onError: (e) => setError(e.message) });
  const act = useMutation({
    mutationFn: () => run(false),
    onSuccess: async (r) => {
      setCounted(null);
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
      <Button size="sm" variant="danger" disabled={counted === 0 || act.isPending} onClick={() => act.mutate()} data-testid={`${testId}-confirm`}>{verb} {counted}</Button>
      <Button size="sm" variant="ghost" onClick={() => setCounted(null)}>Cancel</Button>
    </span>
  );
}
