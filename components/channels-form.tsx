"use client";

import { useState, type FormEvent } from "react";
import type { ChannelInput } from "@/lib/client/alerts";
import { Button } from "./ui/button";
import { Field, inputClass } from "./ui/field";

const KIND_HINT = {
  webhook: "POSTs a JSON body: kind, rule, schedule { name, url }, numbers, thresholds and a text line.",
  slack: "POSTs { text } — works with Slack, Mattermost and other incoming-webhook endpoints.",
  email: "Plain-text mail through SLOTKEEPER_SMTP_URL. Separate addresses with commas.",
} as const;

/** A new channel: name, kind and where to send; `onSubmit` rejects with the API's message. */
export function ChannelForm({ onSubmit, smtpConfigured }: { onSubmit: (input: ChannelInput) => Promise<unknown>; smtpConfigured: boolean }) {
  const [name, setName] = useState("");
  const [kind, setKind] = useState<ChannelInput["kind"]>("webhook");
  const [target, setTarget] = useState("");
  const [error, setError] = useState<{ message: string; field?: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const input: ChannelInput =
      kind === "email"
        ? { name, kind, enabled: true, config: { to: target.split(",").map((s) => s.trim()).filter(Boolean) } }
        : { name, kind, enabled: true, config: { url: target.trim() } };
    try {
      await onSubmit(input);
      setName("");
      setTarget("");
    } catch (err) {
      setError({ message: err instanceof Error ? err.message : String(err), field: (err as { field?: string }).field });
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (f: string) => (error && (error.field === f || error.field?.startsWith(`${f}.`)) ? error.message : undefined);
  const targetError = fieldError("config");
  return (
    <form onSubmit={submit} className="grid gap-3 md:grid-cols-[1fr_10rem_2fr_auto] md:items-start" data-testid="channel-form" noValidate>
      <Field id="channel-name" label="Name" error={fieldError("name")}>
        <input id="channel-name" className={inputClass} value={name} onChange={(e) => setName(e.target.value)} aria-invalid={Boolean(fieldError("name"))} placeholder="ops-webhook" />
      </Field>
      <Field id="channel-kind" label="Kind">
        <select id="channel-kind" className={inputClass} value={kind} onChange={(e) => setKind(e.target.value as ChannelInput["kind"])}>
          <option value="webhook">Webhook (JSON)</option>
          <option value="slack">Slack-compatible</option>
          <option value="email">E-mail{smtpConfigured ? "" : " (SMTP not configured)"}</option>
        </select>
      </Field>
      <Field id="channel-target" label={kind === "email" ? "Recipients" : "URL"} hint={KIND_HINT[kind]} error={targetError}>
        <input
          id="channel-target"
          className={inputClass}
          value={target}
          onChange={(e) => setTarget(e.target.value)}
          aria-invalid={Boolean(targetError)}
          placeholder={kind === "email" ? "ops@example.com, oncall@example.com" : "https://hooks.example.com/…"}
        />
      </Field>
      <div className="md:pt-6">
        <Button type="submit" variant="primary" disabled={busy} data-testid="channel-add">
          Add channel
        </Button>
      </div>
      {error && !error.field?.match(/^(name|config)/) ? (
        <p role="alert" className="text-sm text-red-700 md:col-span-4">
          {error.message}
        </p>
      ) : null}
    </form>
  );
}
