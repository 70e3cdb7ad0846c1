import { BUILTIN_HANDLERS } from "../../lib/handlers/known";
import { defineHandler, NonRetryableError } from "../../lib/handlers/types";
import { isOutboundRefusal } from "../../lib/security/outbound";
import { outboundRequest, type OutboundResponse } from "../../lib/security/outbound-request";

const info = BUILTIN_HANDLERS.find((h) => h.name === "http")!;

/** The http handler's payload. */
export type HttpPayload = { url: string; method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number };

/** Statuses worth retrying: the server may answer differently later. */
const RETRYABLE_STATUS = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * Calls payload.url with Idempotency-Key and X-Fencing-Token headers, the timeout tied to the
 * attempt's signal. 2xx succeeds; 408/429/5xx and network errors retry; other 4xx are permanent.
 * The call goes through the outbound address policy (lib/security/outbound-request.ts): an address
 * it refuses, on the first hop or after a redirect, fails the attempt as non-retryable.
 */
export const httpHandler = defineHandler<HttpPayload>({
  ...info,
  run: async (ctx) => {
    const p = ctx.payload;
    if (!p || typeof p.url !== "string") throw new NonRetryableError("http handler: payload.url is required");
    let url: URL;
    try {
      url = new URL(p.url);
    } catch {
      throw new NonRetryableError(`http handler: payload.url is not a URL: ${p.url}`);
    }
    const method = (p.method ?? "POST").toUpperCase();
    const timeoutMs = p.timeoutMs ?? 30_000;
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
    const body = p.body === undefined || method === "GET" || method === "HEAD" ? undefined : typeof p.body === "string" ? p.body : JSON.stringify(p.body);
    const headers: Record<string, string> = {
      ...(body !== undefined && typeof p.body !== "string" ? { "content-type": "application/json" } : {}),
      ...p.headers,
      "Idempotency-Key": ctx.idempotencyKey,
      "X-Fencing-Token": String(ctx.fencingToken),
    };
    let res: OutboundResponse;
    try {
      res = await outboundRequest(url, { method, headers, body, signal, sender: "http-handler" });
    } catch (err) {
      if (isOutboundRefusal(err)) throw err;
      // Network errors and timeouts retry; the worker's own abort is reported by the worker.
      throw new Error(`http ${method} ${url.origin}${url.pathname}: ${signal.aborted && !ctx.signal.aborted ? `timed out after ${timeoutMs} ms` : (err as Error).message}`, { cause: err });
    }
    const text = res.text;
    const summary = `http ${method} ${url.origin}${url.pathname} → ${res.status}${text ? `: ${text.slice(0, 300)}` : ""}`;
    if (res.ok) return { status: res.status };
    if (RETRYABLE_STATUS(res.status)) throw new Error(summary);
    throw new NonRetryableError(summary);
  },
});
