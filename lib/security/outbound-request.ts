/**
 * Every HTTP request Slotkeeper itself makes (the `http` handler, webhook and Slack channels, a
 * channel's Send test) goes through `outboundRequest`, which keeps two promises:
 *
 * - the connection uses only addresses the outbound policy allows (lib/security/outbound.ts): the
 *   socket's `lookup` is the policy's, so the address checked is the address connected to, and
 *   redirects are followed here, hop by hop, each hop checked the same way;
 * - every request carries OUTBOUND_MARKER, set after the caller's headers so a payload cannot
 *   drop it. The console refuses a marked request as the local operator (lib/auth/client-address.ts),
 *   so even an allowed loopback call cannot act as the person at this machine.
 */
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { OUTBOUND_MARKER } from "../auth/client-address";
import { allowedAddresses, bareHost, getOutboundPolicy, OutboundRefusedError, type OutboundPolicy } from "./outbound";


/** Redirect statuses followed (fetch's set). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Most redirects followed in one request. */
export const MAX_REDIRECTS = 10;
/** Most response bytes kept: answers are summarised in errors, never stored whole. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Headers a redirect to another origin drops, as fetch does. */
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

export type OutboundInit = {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Which part of Slotkeeper sends it (the marker's value), e.g. "http-handler", "alert". */
  sender: string;
  /** The policy to apply; the process's own (SLOTKEEPER_OUTBOUND_ALLOW) by default. */
  policy?: OutboundPolicy;
};

/** An answer: status, headers and up to 64 KiB of the body as text. */
export type OutboundResponse = { status: number; ok: boolean; headers: http.IncomingHttpHeaders; text: string; url: string };

/** A `lookup` for net.connect that resolves through the policy and hands back only allowed addresses. */
function policyLookup(policy: OutboundPolicy, host: string, onRefusal: (err: OutboundRefusedError) => void): LookupFunction {
  return (_hostname, options, callback) => {
    allowedAddresses(policy, host, options.family === 4 || options.family === 6 ? options.family : 0).then(
      (addresses) => {
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (err: Error) => {
        if (err instanceof OutboundRefusedError) onRefusal(err);
        callback(Object.assign(err, { code: (err as { code?: string }).code ?? "EOUTBOUNDREFUSED" }), "", 0);
      },
    );
  };
}

/** One request, no redirects. */
async function once(url: URL, init: OutboundInit & { policy: OutboundPolicy }): Promise<OutboundResponse> {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new OutboundRefusedError(`outbound address policy: only http:// and https:// URLs are called, not ${url.protocol}`, url.href);
  // Address literals never reach `lookup` (net.connect skips it), so they are judged here first.
  if (isIP(bareHost(url.hostname))) await allowedAddresses(init.policy, url.hostname);
  let refusal: OutboundRefusedError | null = null;
  const headers: Record<string, string> = { "user-agent": "slotkeeper" };
  for (const [k, v] of Object.entries(init.headers ?? {})) headers[k.toLowerCase()] = v;
  headers[OUTBOUND_MARKER] = init.sender;
  if (init.body !== undefined) headers["content-length"] = String(Buffer.byteLength(init.body));
  const mod = url.protocol === "https:" ? https : http;
  return new Promise<OutboundResponse>((resolve, reject) => {
    const req = mod.request(
      url,
      {
        method: init.method ?? "GET",
        headers,
        agent: false,
        lookup: policyLookup(init.policy, url.hostname, (err) => (refusal = err)),
        signal: init.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on("data", (c: Buffer) => {
          if (kept < MAX_RESPONSE_BYTES) chunks.push(c.subarray(0, MAX_RESPONSE_BYTES - kept));
          kept += c.length;
        });
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          resolve({ status, ok: status >= 200 && status < 300, headers: res.headers, text: Buffer.concat(chunks).toString("utf8"), url: url.href });
        });
        res.on("error", (err) => reject(init.signal?.aborted ? init.signal.reason : err));
      },
    );
    // As fetch does, an aborted request rejects with the signal's reason (a TimeoutError for AbortSignal.timeout).
    req.on("error", (err) => reject(refusal ?? (init.signal?.aborted ? init.signal.reason : err)));
    req.end(init.body);
  });
}

/**
 * Make an HTTP request under the outbound policy, following up to MAX_REDIRECTS redirects itself
 * and checking every hop. Throws OutboundRefusedError (non-retryable) when the policy refuses a
 * hop; network errors and timeouts throw as they are.
 */
export async function outboundRequest(input: string | URL, init: OutboundInit): Promise<OutboundResponse> {
  const policy = init.policy ?? getOutboundPolicy();
  let url = new URL(input);
  let method = (init.method ?? "GET").toUpperCase();
  let body = init.body;
  let headers = { ...(init.headers ?? {}) };
  for (let hop = 0; ; hop++) {
    const res = await once(url, { ...init, method, body, headers, policy });
    const location = res.headers.location;
    if (!REDIRECTS.has(res.status) || !location) return res;
    if (hop >= MAX_REDIRECTS) throw new Error(`${init.method ?? "GET"} ${new URL(input).href}: more than ${MAX_REDIRECTS} redirects`);
    const next = new URL(location, url);
    // 303 always, and 301/302 after a POST, continue as GET without the body (fetch's rule).
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
      if (method !== "HEAD") method = "GET";
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-/i.test(k)));
    }
    if (next.origin !== url.origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.includes(k.toLowerCase())));
    url = next;
  }
}
