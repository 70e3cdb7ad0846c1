/**
 * The outbound address policy: which addresses the `http` handler, the alert channels and the
 * SMTP client may connect to. By default every address that is not public unicast is refused —
 * loopback, private (RFC 1918, IPv6 unique-local), link-local, CGNAT, multicast, unspecified,
 * broadcast, reserved and documentation ranges, and the cloud metadata services — because anyone
 * who may save a schedule or a channel chooses the URL, and the worker would otherwise be their
 * way into this machine and its network (the console's own API, a database, 169.254.169.254).
 * SLOTKEEPER_OUTBOUND_ALLOW opens host names, addresses or CIDR ranges on purpose.
 *
 * The decision is made on the address actually connected to: names are resolved by a `lookup`
 * handed to net.connect (lib/security/outbound-request.ts), which connects to exactly the
 * addresses that lookup returns, so a name that resolves to a public address when checked and to
 * 127.0.0.1 when used (DNS rebinding) cannot pass. Address parsing is ipaddr.js, not our own
 * code: IPv4-mapped IPv6, NAT64, 6to4 and the decimal/octal/hex spellings are exactly where
 * hand-written checks go wrong, and the URL parser already turns `http://2130706433/` and
 * `http://0x7f.1/` into 127.0.0.1 before we look.
 */
import dns from "node:dns";
import ipaddr from "ipaddr.js";
import { NonRetryableError } from "../handlers/types";

/** The environment variable that opens addresses on purpose. */
export const OUTBOUND_ALLOW_ENV = "SLOTKEEPER_OUTBOUND_ALLOW";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** One SLOTKEEPER_OUTBOUND_ALLOW entry: an exact host name, a `*.` suffix, or an address range. */
export type AllowEntry = { kind: "host"; name: string } | { kind: "suffix"; suffix: string } | { kind: "range"; range: [Address, number]; text: string };

/** Resolves a host name to every address it has (dns.lookup with all: true, or a test's stand-in). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** What the policy needs: the opened entries, and how names are resolved. */
export type OutboundPolicy = { allow: AllowEntry[]; resolve: Resolver };

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address in the order given. */
export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** A connection the policy refused: never worth retrying, so the attempt fails as non-retryable. */
export class OutboundRefusedError extends NonRetryableError {
  constructor(
    message: string,
    readonly address: string,
  ) {
    super(message);
  }
}

/** True for an OutboundRefusedError, also when wrapped as another error's cause. */
export function isOutboundRefusal(err: unknown): err is OutboundRefusedError {
  return err instanceof OutboundRefusedError || (err instanceof Error && err.cause instanceof OutboundRefusedError);
}

/** The host part of a URL or an entry, as the WHATWG URL parser reads it (so every spelling of an address is one address). */
function canonicalHost(host: string): string {
  const h = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return new URL(`http://${h}/`).hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
}

/** The address a packet to `a` really reaches: the IPv4 inside IPv4-mapped, NAT64 (64:ff9b::/96) and 6to4 addresses. */
function effective(a: Address): Address {
  if (a.kind() === "ipv4") return a;
  const v6 = a as ipaddr.IPv6;
  const range = v6.range();
  if (range === "ipv4Mapped" || range === "rfc6145") return v6.toIPv4Address();
  const p = v6.parts;
  if (range === "rfc6052" && p[2] === 0) return new ipaddr.IPv4([p[6] >> 8, p[6] & 255, p[7] >> 8, p[7] & 255]);
  if (range === "6to4") return new ipaddr.IPv4([p[1] >> 8, p[1] & 255, p[2] >> 8, p[2] & 255]);
  return v6;
}

/** Cloud metadata services that are not inside a refused range already (169.254.169.254 and fd00:ec2::254 are). */
const METADATA = ["100.100.100.200", "168.63.129.16", "192.0.0.192"].map((a) => ipaddr.parse(a).toString());

/** ipaddr.js range names as a person reads them. */
const RANGE_NAMES: Record<string, string> = {
  loopback: "a loopback address",
  private: "a private address",
  uniqueLocal: "a private (unique-local) address",
  linkLocal: "a link-local address (this is where cloud metadata services live)",
  carrierGradeNat: "a carrier-grade NAT address",
  multicast: "a multicast address",
  unspecified: "an unspecified address (0.0.0.0 or :: reach this machine)",
  broadcast: "the broadcast address",
};

/**
 * Why the policy refuses an address by default, or null when it is public unicast. An address is
 * judged by what it reaches: `::ffff:127.0.0.1` and `64:ff9b::7f00:1` are loopback.
 */
export function refusedRange(address: string): string | null {
  let parsed: Address;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, "").replace(/%.*$/, ""));
  } catch {
    return "not an IP address";
  }
  if (address.includes("%")) return RANGE_NAMES.linkLocal;
  const a = effective(parsed);
  if (METADATA.includes(a.toString())) return "a cloud metadata address";
  const range = a.range();
  if (range === "unicast") {
    // ::a.b.c.d (IPv4-compatible, deprecated) is unicast to ipaddr.js, but no host should be reached through it.
    if (a.kind() === "ipv6" && (a as ipaddr.IPv6).parts.slice(0, 6).every((x) => x === 0)) return "a reserved address (IPv4-compatible IPv6)";
    return null;
  }
  return RANGE_NAMES[range] ?? `a reserved address (${range})`;
}

/**
 * Parse SLOTKEEPER_OUTBOUND_ALLOW: comma-separated host names (`billing.internal`), `*.` suffixes
 * (`*.internal`), addresses (`127.0.0.1`, `::1`) or CIDR ranges (`10.0.0.0/8`, `fd00::/8`). Throws
 * an Error naming the first entry it cannot read.
 */
export function parseOutboundAllow(value: string | undefined): AllowEntry[] {
  const entries: AllowEntry[] = [];
  for (const raw of (value ?? "").split(",")) {
    const text = raw.trim();
    if (!text) continue;
    const bad = (why: string) => new Error(`entry "${text}" ${why}`);
    if (text.includes("/")) {
      let range: [Address, number];
      try {
        range = ipaddr.parseCIDR(text.replace(/^\[|\](?=\/)/g, ""));
      } catch {
        throw bad("is not a CIDR range (e.g. 10.0.0.0/8 or fd00::/8)");
      }
      const [base, bits] = range;
      // ::ffff:10.0.0.0/104 is 10.0.0.0/8: keep one spelling, as addresses are compared by what they reach.
      if (base.kind() === "ipv6" && (base as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) range = [(base as ipaddr.IPv6).toIPv4Address(), bits - 96];
      entries.push({ kind: "range", range, text });
      continue;
    }
    if (/^\*\./.test(text)) {
      const suffix = text.slice(2).toLowerCase().replace(/\.$/, "");
      if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(suffix)) throw bad("is not a host name suffix (e.g. *.internal)");
      entries.push({ kind: "suffix", suffix });
      continue;
    }
    let host: string;
    try {
      host = canonicalHost(text);
    } catch {
      throw bad("is not a host name, an address or a CIDR range");
    }
    if (/:\d+$/.test(text) && !ipaddr.IPv6.isValid(text.replace(/^\[|\]$/g, ""))) throw bad("has a port; entries are host names, addresses or ranges, without ports");
    if (ipaddr.isValid(host)) {
      const a = effective(ipaddr.parse(host));
      entries.push({ kind: "range", range: [a, a.kind() === "ipv4" ? 32 : 128], text });
    } else if (/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(host)) {
      entries.push({ kind: "host", name: host });
    } else {
      throw bad("is not a host name, an address or a CIDR range");
    }
  }
  return entries;
}

/** Whether the policy opens this host name (as written in the URL) on purpose, whatever it resolves to. */
export function hostAllowed(policy: Pick<OutboundPolicy, "allow">, host: string): boolean {
  const name = canonicalHost(host);
  return policy.allow.some((e) => (e.kind === "host" && e.name === name) || (e.kind === "suffix" && (name === e.suffix || name.endsWith(`.${e.suffix}`))));
}

/** Whether an address lies in an opened range (compared by what it reaches, so ::ffff:10.1.2.3 is in 10.0.0.0/8). */
function addressAllowed(policy: Pick<OutboundPolicy, "allow">, address: string): boolean {
  const a = effective(ipaddr.parse(address.replace(/^\[|\]$/g, "").replace(/%.*$/, "")));
  return policy.allow.some((e) => e.kind === "range" && e.range[0].kind() === a.kind() && a.match(e.range as [typeof a, number]));
}

/** The refusal for connecting to `address` (reached through host `host`), or null when the policy lets it through. */
export function checkAddress(policy: Pick<OutboundPolicy, "allow">, host: string, address: string): OutboundRefusedError | null {
  if (hostAllowed(policy, host)) return null;
  const why = refusedRange(address);
  if (why === null || (why !== "not an IP address" && addressAllowed(policy, address))) return null;
  const shown = canonicalHost(host) === canonicalHost(address) ? address : `${host} (${address})`;
  return new OutboundRefusedError(
    `outbound address policy: ${shown} is ${why}, which Slotkeeper does not connect to by default. ` +
      `To allow it on purpose, add it to ${OUTBOUND_ALLOW_ENV} on the workers and the console (for example ${OUTBOUND_ALLOW_ENV}=${suggestion(host, address)})`,
    address,
  );
}

function suggestion(host: string, address: string): string {
  const name = canonicalHost(host);
  return ipaddr.isValid(name) ? effective(ipaddr.parse(name)).toString() : name || address;
}

let cached: { text: string; policy: OutboundPolicy } | undefined;

/**
 * This process's policy from SLOTKEEPER_OUTBOUND_ALLOW (lib/config.ts validates it at start, so a
 * bad value has already stopped the process), re-read only when the variable changes.
 */
export function getOutboundPolicy(env: Record<string, string | undefined> = process.env): OutboundPolicy {
  const text = env[OUTBOUND_ALLOW_ENV] ?? "";
  if (cached?.text !== text) cached = { text, policy: { allow: parseOutboundAllow(text), resolve: systemResolver } };
  return cached.policy;
}

/** A host name or address literal, as net.connect sees it (brackets off). */
export function bareHost(host: string): string {
  return host.replace(/^\[|\]$/g, "");
}

/**
 * The addresses of `host` that the policy lets a connection use, or the refusal. An address literal
 * is judged as it is; a name is resolved here, and the connection must use exactly these addresses.
 */
export async function allowedAddresses(policy: OutboundPolicy, host: string, family = 0): Promise<{ address: string; family: number }[]> {
  const bare = bareHost(host);
  if (ipaddr.isValid(bare) && (bare.includes(":") || ipaddr.IPv4.isValidFourPartDecimal(bare))) {
    const refusal = checkAddress(policy, host, bare);
    if (refusal) throw refusal;
    return [{ address: bare, family: bare.includes(":") ? 6 : 4 }];
  }
  const all = (await policy.resolve(bare)).filter((a) => !family || a.family === family);
  if (!all.length) throw new Error(`${bare} has no ${family ? `IPv${family} ` : ""}address`);
  const refusals = all.map((a) => checkAddress(policy, host, a.address));
  const ok = all.filter((_a, i) => refusals[i] === null);
  if (!ok.length) throw refusals[0]!;
  return ok;
}

/**
 * The warning for saving `url` from this process (the worker's network and resolver may differ,
 * so it is a warning, not a refusal), or null when the policy would let it through here.
 */
export async function outboundUrlWarning(url: string, policy: OutboundPolicy = getOutboundPolicy(), timeoutMs = 2000): Promise<string | null> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      allowedAddresses(policy, u.hostname),
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    return null;
  } catch (err) {
    return err instanceof OutboundRefusedError ? err.message : null;
  } finally {
    clearTimeout(timer);
  }
}
