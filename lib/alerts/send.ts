/**
 * Send one alert message to one channel. Throws with a short, human reason on any failure
 * (refused, non-2xx, timeout, SMTP missing): the delivery loop stores it as `last_error`.
 */
import { slackBody, subjectOf, textOf, webhookBody, type AlertMessage } from "./message";
import { isOutboundRefusal, type OutboundPolicy } from "../security/outbound";
import { outboundRequest, type OutboundResponse } from "../security/outbound-request";
import { sendMail, type SmtpConfig } from "./smtp";

export type SendContext = {
  /** The SMTP server for e-mail channels; null when SLOTKEEPER_SMTP_URL is unset. */
  smtp: SmtpConfig | null;
  /** Each send gives up after this long, so one dead endpoint cannot hold a delivery loop. */
  timeoutMs: number;
  /** The outbound address policy; the process's own (SLOTKEEPER_OUTBOUND_ALLOW) when absent. */
  policy?: OutboundPolicy;
};

export type SendableChannel = { kind: string; config: unknown };

/** Send `message` to `channel`; resolves when the receiver accepted it. */
export async function sendToChannel(channel: SendableChannel, message: AlertMessage, ctx: SendContext): Promise<void> {
  const config = (channel.config ?? {}) as { url?: string; to?: string[] };
  switch (channel.kind) {
    case "webhook":
      return postJson(requireUrl(config.url), webhookBody(message), ctx);
    case "slack":
      return postJson(requireUrl(config.url), slackBody(message), ctx);
    case "email":
      if (!ctx.smtp) throw new Error("e-mail is not configured: set SLOTKEEPER_SMTP_URL for the workers");
      if (!config.to?.length) throw new Error("the channel has no recipients");
      return sendMail(ctx.smtp, { to: config.to, subject: subjectOf(message), text: textOf(message) }, { timeoutMs: ctx.timeoutMs, policy: ctx.policy });
    default:
      throw new Error(`unknown channel kind "${channel.kind}"`);
  }
}

function requireUrl(url: string | undefined): string {
  if (!url) throw new Error("the channel has no URL");
  return url;
}

async function postJson(url: string, body: unknown, { timeoutMs, policy }: SendContext): Promise<void> {
  let res: OutboundResponse;
  try {
    res = await outboundRequest(url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "slotkeeper-alerts" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
      sender: "alert",
      policy,
    });
  } catch (err) {
    if (isOutboundRefusal(err)) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = (err as Error).name === "TimeoutError" ? `timed out after ${timeoutMs} ms` : (cause?.code ?? cause?.message ?? (err as Error).message);
    throw new Error(`POST ${url} failed: ${why}`, { cause: err });
  }
  if (!res.ok) {
    const text = res.text.slice(0, 200);
    throw new Error(`POST ${url} answered ${res.status}${text ? `: ${text}` : ""}`);
  }
}
