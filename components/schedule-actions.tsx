"use client";

import { useState } from "react";
import type { BackfillResult } from "@/lib/client/schedules";
import { Button } from "./ui/button";
import { Field, inputClass } from "./ui/field";

type Props = {
  enabled: boolean;
  busy: boolean;
  /** A manual run now; with a payload, that run's in place of the schedule's. */
  onRunNow: (payload?: Record<string, unknown>) => void;
  /** The schedule's payload (secrets masked), the starting point of a run-now payload. */
  payload: unknown;
  /** A plain pause, or one with a note (applies keep it paused) and an auto-resume time. */
  onPause: (hold?: { note?: string; resumeAt?: string }) => void;
  onResume: () => void;
  onEdit: () => void;
  /** Dry run first: resolves with the count it would create. */
  onBackfillPreview: (from: string, to: string) => Promise<BackfillResult>;
  onBackfill: (from: string, to: string) => Promise<unknown>;
  onDelete: (keepHistory: boolean) => void;
};

const localInput = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

/** Run now, pause/resume, edit, backfill a range (count shown before confirming) and delete. */
export function ScheduleActions(p: Props) {
  const [panel, setPanel] = useState<"none" | "backfill" | "delete" | "pause" | "payload">("none");
  const [payloadText, setPayloadText] = useState(() => JSON.stringify(p.payload ?? {}, null, 2));
  const [payloadError, setPayloadError] = useState<string | null>(null);
  const [note, setNote] = useState("");
  const [resumeAt, setResumeAt] = useState("");
  const [from, setFrom] = useState(() => localInput(new Date(Date.now() - 3_600_000)));
  const [to, setTo] = useState(() => localInput(new Date()));
  const [preview, setPreview] = useState<BackfillResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [keep, setKeep] = useState(true);
  const iso = (v: string) => new Date(v).toISOString();

  const check = async () => {
    setError(null);
    setPreview(null);
    try {
      if (!from || !to) throw new Error("give both ends of the range");
      setPreview(await p.onBackfillPreview(iso(from), iso(to)));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  const confirm = async () => {
    try {
      await p.onBackfill(iso(from), iso(to));
      setPanel("none");
      setPreview(null);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  const count = preview ? (preview.wouldCreate ?? preview.created ?? 0) : 0;

  return (
    <div className="space-y-3">
      <div className="flex flex-wrap gap-2">
        <Button variant="primary" onClick={() => p.onRunNow()} disabled={p.busy} data-testid="run-now">Run now</Button>
        <Button onClick={() => setPanel(panel === "payload" ? "none" : "payload")} aria-expanded={panel === "payload"} disabled={p.busy} data-testid="run-now-payload-open">Run now with a payload…</Button>
        {p.enabled ? (
          <>
            <Button onClick={() => p.onPause()} disabled={p.busy} data-testid="pause">Pause</Button>
            <Button onClick={() => setPanel(panel === "pause" ? "none" : "pause")} aria-expanded={panel === "pause"} disabled={p.busy} data-testid="pause-note-open">Pause with a note…</Button>
          </>
        ) : (
          <Button onClick={p.onResume} disabled={p.busy} data-testid="resume">Resume</Button>
        )}
        <Button onClick={p.onEdit} data-testid="edit-schedule">Edit</Button>
        <Button onClick={() => setPanel(panel === "backfill" ? "none" : "backfill")} aria-expanded={panel === "backfill"} data-testid="backfill-open">Backfill…</Button>
        <Button variant="danger" onClick={() => setPanel(panel === "delete" ? "none" : "delete")} aria-expanded={panel === "delete"} data-testid="delete-open">Delete…</Button>
      </div>
      {panel === "payload" ? (
        <form
          className="rounded-lg border border-slate-200 bg-white p-4"
          data-testid="run-now-payload-panel"
          onSubmit={(e) => {
            e.preventDefault();
            let parsed: unknown;
            try {
              parsed = JSON.parse(payloadText);
            } catch (err) {
              setPayloadError(`not JSON: ${(err as Error).message}`);
              return;
            }
            if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
              setPayloadError("the payload must be a JSON object");
              return;
            }
            setPayloadError(null);
            p.onRunNow(parsed as Record<string, unknown>);
            setPanel("none");
          }}
        >
          <p className="mb-3 text-sm text-slate-600">One manual run with this payload instead of the schedule&apos;s; the schedule and its slots stay as they are. Masked secrets (••••••••) must be given again, or as {"{ \"$env\": \"NAME\" }"}.</p>
          <Field id="run-now-payload" label="Payload (JSON)" error={payloadError ?? undefined}>
            <textarea id="run-now-payload" rows={6} className={`${inputClass} font-mono text-xs`} value={payloadText} onChange={(e) => setPayloadText(e.target.value)} data-testid="run-now-payload" />
          </Field>
          <Button type="submit" variant="primary" disabled={p.busy} className="mt-3" data-testid="run-now-payload-confirm">Run now with this payload</Button>
        </form>
      ) : null}
      {panel === "pause" && p.enabled ? (
        <form
          className="rounded-lg border border-slate-200 bg-white p-4"
          data-testid="pause-panel"
          onSubmit={(e) => {
            e.preventDefault();
            p.onPause({ note: note.trim() || undefined, resumeAt: resumeAt ? iso(resumeAt) : undefined });
            setPanel("none");
          }}
        >
          <p className="mb-3 text-sm text-slate-600">A pause with a note stays through applies of the schedule&apos;s file until it is resumed; with a time, a worker resumes it then, and the missed slots follow its catch-up policy.</p>
          <div className="flex flex-wrap items-end gap-3">
            <Field id="pause-note" label="Note">
              <input id="pause-note" className={`${inputClass} w-72`} value={note} onChange={(e) => setNote(e.target.value)} maxLength={2000} required data-testid="pause-note" />
            </Field>
            <Field id="pause-resume-at" label="Resume at (optional)">
              <input id="pause-resume-at" type="datetime-local" className={inputClass} value={resumeAt} onChange={(e) => setResumeAt(e.target.value)} data-testid="pause-resume-at" />
            </Field>
            <Button type="submit" variant="primary" disabled={p.busy} data-testid="pause-confirm">Pause</Button>
          </div>
        </form>
      ) : null}
      {panel === "backfill" ? (
        <div className="rounded-lg border border-slate-200 bg-white p-4" data-testid="backfill-panel">
          <p className="mb-3 text-sm text-slate-600">Create one backfill run for every slot in the range that has no run yet. Times are in your zone.</p>
          <div className="flex flex-wrap items-end gap-3">
            <Field id="backfill-from" label="From">
              <input id="backfill-from" type="datetime-local" className={inputClass} value={from} onChange={(e) => { setFrom(e.target.value); setPreview(null); }} />
            </Field>
            <Field id="backfill-to" label="To">
              <input id="backfill-to" type="datetime-local" className={inputClass} value={to} onChange={(e) => { setTo(e.target.value); setPreview(null); }} />
            </Field>
            <Button onClick={check} data-testid="backfill-check">Count slots</Button>
            {preview ? (
              <Button variant="primary" onClick={confirm} disabled={count === 0 || p.busy} data-testid="backfill-confirm">
                Create {count} run{count === 1 ? "" : "s"}
              </Button>
            ) : null}
          </div>
          {preview ? (
            <p className="mt-2 text-sm text-slate-700" data-testid="backfill-count">
              {preview.slots ?? count} slot{preview.slots === 1 ? "" : "s"} in range; {String(preview.existing ?? 0)} already have a run; <strong>{count}</strong> will be created.
            </p>
          ) : null}
          {error ? <p role="alert" className="mt-2 text-sm text-red-700">{error}</p> : null}
        </div>
      ) : null}
      {panel === "delete" ? (
        <div className="rounded-lg border border-red-200 bg-red-50 p-4 text-sm" data-testid="delete-panel">
          <p className="font-medium text-red-900">Delete this schedule? No new slots will be created.</p>
          <label className="mt-2 flex items-center gap-2">
            <input type="radio" name="history" checked={keep} onChange={() => setKeep(true)} /> Keep its run history (the name becomes free again)
          </label>
          <label className="mt-1 flex items-center gap-2">
            <input type="radio" name="history" checked={!keep} onChange={() => setKeep(false)} /> Remove its run history too
          </label>
          <div className="mt-3 flex gap-2">
            <Button variant="danger" onClick={() => p.onDelete(keep)} disabled={p.busy} data-testid="delete-confirm">Delete schedule</Button>
            <Button variant="ghost" onClick={() => setPanel("none")}>Cancel</Button>
          </div>
        </div>
      ) : null}
    </div>
  );
}
