/**
 * Who is on the other end of a request. Next 16 hands route handlers and proxy.ts a web Request
 * with no socket, and its own X-Forwarded-For is filled in with `??=` — a client that sends the
 * header itself keeps its (forged) value. So the instrumentation hook (lib/auth/peer-hook.ts)
 * stamps the socket's address into PEER_HEADER before Next sees the request, overwriting anything
 * a client sent under that name, and copies what the client sent as X-Forwarded-For into
 * FORWARDED_HEADER. This module turns those facts into a decision.
 */

import ipaddr from "ipaddr.js";

/** The socket's remote address, stamped by the peer hook; a client cannot set it. */
export const PEER_HEADER = "x-slotkeeper-peer";
/** The X-Forwarded-For the request arrived with (before Next adds its own), stamped by the hook. */
export const FORWARDED_HEADER = "x-slotkeeper-forwarded-for";

/**
 * The header every request Slotkeeper itself sends carries (lib/security/outbound-request.ts sets
 * it after the caller's headers, so a schedule's payload cannot remove it). A marked request is
 * never the local operator, whatever address it comes from: a schedule or channel pointed at the
 * console's own API must not act as the person at this machine. Anyone may send it; it only takes
 * privilege away.
 */
export const OUTBOUND_MARKER = "slotkeeper-outbound";

/** Why a marked request is refused as the local operator. */
export const OUTBOUND_REFUSAL =
  "the request was sent by Slotkeeper itself (an http schedule or an alert channel), and Slotkeeper's own requests never act as the local operator; " +
  "send an API token in its Authorization header if a schedule must call this API";

export type ClientAddress = {
  /** The client's IP address, or null when it cannot be known (in-process calls, missing hook). */
  address: string | null;
  /** True only when the request provably comes from this machine's loopback interface. */
  loopback: boolean;
  /** Why `loopback` is false when the address alone does not say. */
  reason?: string;
};

/** Strip an IPv4-mapped IPv6 prefix and brackets so "::ffff:127.0.0.1" and "[::1]" compare plainly. */
export function normalizeAddress(a: string): string {
  const t = a.trim().replace(/^\[|\]$/g, "");
  return t.toLowerCase().startsWith("::ffff:") && t.includes(".") ? t.slice(7) : t.toLowerCase();
}

/** Whether an IP address (socket or Host spelling) belongs to the loopback interface: 127.0.0.0/8, ::1, or either mapped. Parsed by ipaddr.js. */
export function isLoopbackAddress(a: string): boolean {
  const t = a.trim().replace(/^\[|\]$/g, "");
  // Only strict spellings: a Host header of "127.1" or "0x7f.1" is a name to us, as it is to DNS.
  if (!ipaddr.IPv6.isValid(t) && !ipaddr.IPv4.isValidFourPartDecimal(t)) return false;
  const parsed = ipaddr.process(t);
  return parsed.range() === "loopback";
}

/** Whether a Host header names this machine's loopback (localhost, *.localhost, 127.x, [::1]). */
export function isLoopbackHost(host: string): boolean {
  const name = host.trim().toLowerCase().replace(/:\d+$/, "");
  return name === "localhost" || name.endsWith(".localhost") || isLoopbackAddress(name);
}

/** True inside a Next.js server, where a request without the peer stamp must not be trusted. */
function insideNextServer(): boolean {
  return process.env.NEXT_RUNTIME !== undefined || (globalThis as { __slotkeeperPeerHook?: boolean }).__slotkeeperPeerHook === true;
}

/**
 * The client of a request. Without SLOTKEEPER_TRUST_PROXY a request that carries X-Forwarded-For
 * is not loopback even when the socket is: a reverse proxy on this machine would otherwise make
 * every remote visitor look local. With it, the right-most X-Forwarded-For entry (the one the
 * proxy appended; entries to its left are the client's own claims) is the client.
 */
export function clientAddress(headers: Headers, opts: { trustProxy: boolean; insideServer?: boolean }): ClientAddress {
  const peer = headers.get(PEER_HEADER);
  if (headers.has(OUTBOUND_MARKER)) return { address: peer ? normalizeAddress(peer) : null, loopback: false, reason: OUTBOUND_REFUSAL };
  if (!peer) {
    if (opts.insideServer ?? insideNextServer()) return { address: null, loopback: false, reason: "the client address is unknown (the peer hook in instrumentation.ts did not run)" };
    // A handler called in-process (tests, scripts) has no network peer at all.
    return { address: null, loopback: true };
  }
  const forwarded = headers.get(FORWARDED_HEADER);
  if (forwarded) {
    if (opts.trustProxy) {
      const hops = forwarded.split(",").map((s) => s.trim()).filter(Boolean);
      const last = hops.at(-1);
      if (!last) return { address: null, loopback: false, reason: "empty X-Forwarded-For" };
      const address = normalizeAddress(last);
      return { address, loopback: isLoopbackAddress(address) };
    }
    const address = normalizeAddress(peer);
    return isLoopbackAddress(address)
      ? { address, loopback: false, reason: "the request came through a proxy (X-Forwarded-For); set SLOTKEEPER_TRUST_PROXY=true if that proxy is yours" }
      : { address, loopback: false };
  }
  const address = normalizeAddress(peer);
  return { address, loopback: isLoopbackAddress(address) };
}
