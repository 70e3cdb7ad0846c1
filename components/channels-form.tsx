"use client";

import { useState, type FormEvent } from "react";
import type { ChannelInput, ChannelView } from "@/lib/client/alerts";
import { parseTags } from "@/lib/client/schedule-form-values";
import { Button } from "./ui/button";
import { Field, inputClass } from "./ui/field";

const KIND_HINT = {
  webhook: "POSTs a JSON body: kind, rule, schedule { name, url }, numbers, thresholds and a text line.",
  slack: "POSTs { text } — works with Slack, Mattermost and other incoming-webhook endpoints.",
  email: "Plain-text mail through SLOTKEEPER_SMTP_URL. Separate addresses with commas.",
} as const;

type Props = {
  onSubmit: (input: ChannelInput) => Promise<unknown>;
  smtpConfigured: boolean;
  /** Edit this channel instead of adding one (mount with key={channel.id}). */
  initial?: ChannelView;
  onCancel?: () => void;
};

/** A channel's name, kind and where to send, new or edited; `onSubmit` rejects with the API's message. */
export function ChannelForm({ onSubmit, smtpConfigured, initial, onCancel }: Props) {
  const cfg = (initial?.config ?? {}) as { url?: string; to?: string[] };
  const [name, setName] = useState(initial?.name ?? "");
  const [kind, setKind] = useState<ChannelInput["kind"]>(initial?.kind ?? "webhook");
  const [target, setTarget] = useState(initial ? (initial.kind === "email" ? (cfg.to ?? []).join(", ") : (cfg.url ?? "")) : "");
  const [tags, setTags] = useState((initial?.tags ?? []).join(", "));
  const [error, setError] = useState<{ message: string; field?: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const input: ChannelInput =
      kind === "email"
        ? { name, kind, enabled: initial?.enabled ?? true, tags: parseTags(tags), config: { to: target.split(",").map((s) => s.trim()).filter(Boolean) } }
        : { name, kind, enabled: initial?.enabled ?? true, tags: parseTags(tags), config: { url: target.trim() } };
    try {
      await onSubmit(input);
      if (!initial) {
        setName("");
        setTarget("");
        setTags("");
      }
    } catch (err) {
      setError({ message: err instanceof Error ? err.message : String(err), field: (err as { field?: string }).field });
    } finally {
      setBusy(false);
    }
  };

  // Unique ids while an edit form and the add form are both on the page; e2e drives "channel-*".
  const idp = initial ? `channel-${initial.id}` : "channel";
  const fieldError = (f: string) => (error && (error.field === f || error.field?.startsWith(`${f}.`)) ? error.message : undefined);
  const targetError = fieldError("config");
  return (
    <form onSubmit={submit} className="grid gap-3 md:grid-cols-[1fr_10rem_2fr_auto] md:items-start" data-testid={initial ? "channel-edit-form" : "channel-form"} noValidate>
      <Field id={`${idp}-name`} label="Name" error={fieldError("name")}>
        <input id={`${idp}-name`} className={inputClass} value={name} onChange={(e) => setName(e.target.value)} aria-invalid={Boolean(fieldError("name"))} placeholder="ops-webhook" />
      </Field>
      <Field id={`${idp}-kind`} label="Kind">
        <select id={`${idp}-kind`} className={inputClass} value={kind} onChange={(e) => setKind(e.target.value as ChannelInput["kind"])}>
          <option value="webhook">Webhook (JSON)</option>
          <option value="slack">Slack-compatible</option>
          <option value="email">E-mail{smtpConfigured ? "" : " (SMTP not configured)"}</option>
        </select>
      </Field>
      <Field id={`${idp}-target`} label={kind === "email" ? "Recipients" : "URL"} hint={KIND_HINT[kind]} error={targetError}>
        <input
          id={`${idp}-target`}
          className={inputClass}
          value={target}
          onChange={(e) => setTarget(e.target.value)}
          aria-invalid={Boolean(targetError)}
          placeholder={kind === "email" ? "ops@example.com, oncall@example.com" : "https://hooks.example.com/…"}
        />
      </Field>
      <Field id={`${idp}-tags`} label="Only schedules tagged" hint="Empty: every schedule. Otherwise alerts of schedules carrying one of these tags (commas or spaces)." error={fieldError("tags")} className="md:col-span-3">
        <input id={`${idp}-tags`} data-testid={`${idp}-tags`} className={inputClass} value={tags} onChange={(e) => setTags(e.target.value)} aria-invalid={Boolean(fieldError("tags"))} placeholder="billing, payments" spellCheck={false} />
      </Field>
      <div className="flex gap-2 md:pt-6">
        <Button type="submit" variant="primary" disabled={busy} data-testid={initial ? "channel-save" : "channel-add"}>
          {initial ? "Save" : "Add channel"}
        </Button>
        {onCancel ? <Button onClick={onCancel}>Cancel</Button> : null}
      </div>
      {error && !error.field?.match(/^(name|config|tags)/) ? (
        <p role="alert" className="text-sm text-red-700 md:col-span-4">
          {error.message}
        </p>
      ) : null}
    </form>
  );
}
