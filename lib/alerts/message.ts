/**
 * What a notification says. Every one names the schedule, the rule, the three numbers and a link
 * to the schedule in the console; the webhook body carries the same as structured JSON.
 */
import type { AlertDetails, AlertKind, AlertRule } from "./rules";
import { formatDuration } from "../format/duration";

/** An alert event as the senders see it; `test` is the sample the console's "Send test" button sends. */
export type AlertMessage = {
  eventId: number | null;
  kind: AlertKind | "test";
  scheduleId: number | null;
  scheduleName: string;
  rule: AlertRule | string;
  at: string;
  details: AlertDetails;
};

const RULE_WORD: Record<string, string> = { late: "late", failing: "failing", backlogged: "backlogged", unserved: "unserved", stuck: "stuck" };

/** Why the rule holds, in the words of its numbers. */
function reason(m: AlertMessage): string {
  const d = m.details;
  switch (m.rule) {
    case "late":
      return d.sinceLastSuccessSeconds === null
        ? `never succeeded in ${formatDuration(d.ageSeconds)} since it was created (late after ${formatDuration(d.lateAfterSeconds)})`
        : `no success for ${formatDuration(d.sinceLastSuccessSeconds)} (late after ${formatDuration(d.lateAfterSeconds)})`;
    case "failing":
      return `${d.deadRuns} dead run${d.deadRuns === 1 ? "" : "s"} need${d.deadRuns === 1 ? "s" : ""} a person`;
    case "backlogged":
      return `oldest pending run has waited ${formatDuration(d.oldestPendingAgeSeconds)} (backlogged after ${formatDuration(d.backlogAfterSeconds)})`;
    case "unserved": {
      const u = d.unservedHandler;
      return u
        ? `no live worker serves handler "${u.handler}"${u.since ? ` since ${u.since}` : ""} (unserved after ${formatDuration(d.unservedAfterSeconds ?? null)})`
        : `a live worker serves its handler again`;
    }
    case "stuck": {
      const r = d.stuckRun;
      return r
        ? `run ${r.runId} has been running since ${r.startedAt}, its lease still renewed, and is stuck since ${r.since} (stuck after ${formatDuration(r.afterSeconds)})`
        : "no run of it is stuck any more";
    }
    default:
      return "";
  }
}

/** The three numbers, always, so a reader can judge without opening the console. */
function numbers(d: AlertDetails): string {
  const since = d.sinceLastSuccessSeconds === null ? "never" : formatDuration(d.sinceLastSuccessSeconds);
  return `since last success ${since} · dead runs ${d.deadRuns} · oldest pending ${formatDuration(d.oldestPendingAgeSeconds)}`;
}

/** One-line subject, e.g. "[FIRING] nightly-report is late". */
export function subjectOf(m: AlertMessage): string {
  const word = RULE_WORD[m.rule] ?? m.rule;
  switch (m.kind) {
    case "firing":
      return `[FIRING] ${m.scheduleName} is ${word}`;
    case "reminder":
      return `[STILL FIRING] ${m.scheduleName} is still ${word}`;
    case "resolved":
      return `[RESOLVED] ${m.scheduleName} is no longer ${word}`;
    case "test":
      return `[TEST] Slotkeeper test notification`;
  }
}

/** The human text: subject, why, the numbers and the link. Used as Slack `text` and e-mail body. */
export function textOf(m: AlertMessage): string {
  const d = m.details;
  const lines = [subjectOf(m)];
  if (m.kind === "test") lines.push("This is a sample of what Slotkeeper sends when a schedule goes late, fails or backs up.");
  if (m.kind === "firing" || m.kind === "reminder" || m.kind === "test") lines.push(reason(m));
  if (m.kind === "reminder" && d.firingSince) lines.push(`firing since ${d.firingSince}`);
  if (m.kind === "resolved") {
    const why = d.status === "paused" ? " (schedule paused)" : d.status === "deleted" ? " (schedule deleted)" : "";
    lines.push(`recovered${why}${d.firingSince ? ` after firing since ${d.firingSince}` : ""}`);
  }
  lines.push(numbers(d));
  lines.push(d.url);
  return lines.join("\n");
}

/** The JSON body of a plain webhook: the event, the numbers and the link, plus the same text. */
export function webhookBody(m: AlertMessage) {
  const d = m.details;
  return {
    kind: m.kind,
    rule: m.rule,
    schedule: { id: m.scheduleId, name: m.scheduleName, url: d.url },
    at: m.at,
    status: d.status,
    numbers: {
      sinceLastSuccessSeconds: d.sinceLastSuccessSeconds,
      deadRuns: d.deadRuns,
      oldestPendingAgeSeconds: d.oldestPendingAgeSeconds,
    },
    thresholds: { lateAfterSeconds: d.lateAfterSeconds, backlogAfterSeconds: d.backlogAfterSeconds },
    firingSince: d.firingSince ?? null,
    eventId: m.eventId,
    text: textOf(m),
  };
}

/** A Slack-compatible incoming-webhook body: just `{ text }`. */
export function slackBody(m: AlertMessage): { text: string } {
  return { text: textOf(m) };
}

/** The sample the "Send test" button sends: a made-up late schedule. */
export function sampleMessage(publicUrl: string, at: Date): AlertMessage {
  return {
    eventId: null,
    kind: "test",
    scheduleId: null,
    scheduleName: "example-schedule",
    rule: "late",
    at: at.toISOString(),
    details: {
      status: "late",
      sinceLastSuccessSeconds: 631,
      deadRuns: 0,
      oldestPendingAgeSeconds: null,
      lateAfterSeconds: 630,
      backlogAfterSeconds: 300,
      ageSeconds: 86_400,
      url: `${publicUrl.replace(/\/+$/, "")}/alerts`,
    },
  };
}
