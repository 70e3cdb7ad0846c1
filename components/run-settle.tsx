"use client";

import { useState } from "react";
import { useMutation } from "@tanstack/react-query";
import { settleRun } from "@/lib/client/runs";
import { Button } from "./ui/button";
import { inputClass } from "./ui/field";
import { ErrorState } from "./ui/states";

const WORDS = {
  cancel: { button: "Cancel run", confirm: "Cancel this run", hint: "It will not run; it is recorded as skipped (cancelled)." },
  discard: { button: "Discard", confirm: "Discard this run", hint: "It is recorded as skipped (discarded) and no longer makes its schedule failing." },
} as const;

/**
 * Cancel a pending run or discard a dead one, with an optional reason for the audit log. A run
 * that a worker claims meanwhile is refused by the API (409), which shows here.
 */
export function RunSettle({ id, action, onDone }: { id: number; action: "cancel" | "discard"; onDone: () => unknown }) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const words = WORDS[action];
  const settle = useMutation({ mutationFn: () => settleRun(id, action, reason), onSuccess: async () => { setOpen(false); await onDone(); } });
  if (!open) return <Button variant="danger" onClick={() => setOpen(true)} data-testid={`${action}-run`}>{words.button}</Button>;
  return (
    <form
      className="flex flex-wrap items-center gap-2"
      data-testid={`${action}-form`}
      onSubmit={(e) => {
        e.preventDefault();
        settle.mutate();
      }}
    >
      <label className="sr-only" htmlFor={`${action}-reason`}>Reason (optional)</label>
      <input id={`${action}-reason`} className={`${inputClass} w-64`} placeholder="reason (optional, kept in the audit log)" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} data-testid={`${action}-reason`} />
      <Button type="submit" variant="danger" disabled={settle.isPending} data-testid={`${action}-confirm`} title={words.hint}>{words.confirm}</Button>
      <Button variant="ghost" onClick={() => setOpen(false)}>Keep it</Button>
      {settle.isError ? <div className="w-full"><ErrorState error={settle.error} /></div> : null}
    </form>
  );
}
