/**
 * Secrets in payloads (an Authorization header for the http handler, say) are never shown back in
 * full: API responses and audit entries carry MASK instead of the value of any sensitive key, and
 * an edit that sends MASK back keeps the stored value (restoreMasked). A payload may also name an
 * environment variable instead of holding the value — `{ "$env": "HOOK_TOKEN" }` — which only the
 * worker resolves (resolveEnvRefs); such a reference is shown as is, since it holds no secret.
 */
import { AppError } from "../errors";

/** What a masked value reads as; sending it back in an edit means "unchanged". */
export const MASK = "••••••••";

/** Keys whose values are secrets, matched case-insensitively anywhere in the key. */
const SENSITIVE = /authorization|password|passwd|passphrase|secret|token|api[-_]?key|apikey|cookie|credential|private[-_]?key|access[-_]?key|signature|session/i;

/** Whether a key (or a header name) holds a secret. */
export function isSensitiveKey(key: string): boolean {
  return SENSITIVE.test(key);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isEnvRef = (v: unknown): boolean => isObject(v) && typeof v.$env === "string" && Object.keys(v).length === 1;

/**
 * A copy of `value` with every sensitive key's value replaced by MASK, at any depth; also the
 * `value` of `{ name: "Authorization", value }` pairs (header lists). Env references stay visible.
 */
export function maskSecrets<T>(value: T): T {
  return maskInner(value) as T;
}

function maskInner(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskInner);
  if (!isObject(value)) return value;
  const pairName = typeof value.name === "string" ? value.name : typeof value.key === "string" ? value.key : undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const secret = isSensitiveKey(k) || (k === "value" && pairName !== undefined && isSensitiveKey(pairName));
    out[k] = secret && v !== null && v !== undefined && v !== "" && !isEnvRef(v) ? MASK : maskInner(v);
  }
  return out;
}

/**
 * The payload an edit means: wherever `incoming` holds MASK, the value at the same place in
 * `stored` is kept, so saving a form that showed a masked secret does not overwrite it.
 */
export function restoreMasked<T>(incoming: T, stored: unknown): T {
  return restoreInner(incoming, stored) as T;
}

function restoreInner(incoming: unknown, stored: unknown): unknown {
  if (incoming === MASK) return stored === undefined ? incoming : stored;
  if (Array.isArray(incoming)) return incoming.map((v, i) => restoreInner(v, Array.isArray(stored) ? stored[i] : undefined));
  if (!isObject(incoming)) return incoming;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(incoming)) out[k] = restoreInner(v, isObject(stored) ? stored[k] : undefined);
  return out;
}

/** Whether a payload still holds MASK after restoring (a masked value with nothing stored behind it). */
export function containsMask(value: unknown): boolean {
  if (value === MASK) return true;
  if (Array.isArray(value)) return value.some(containsMask);
  return isObject(value) && Object.values(value).some(containsMask);
}

/** Refuse (400, field payload) a payload that still holds MASK: there is no stored secret behind it. */
export function refuseMaskedPayload(payload: unknown): void {
  if (payload !== undefined && containsMask(payload)) {
    throw new AppError("invalid", `payload holds the mask ${MASK} where no secret is stored; send the value itself or { "$env": "NAME" }`, "payload");
  }
}

/**
 * Whether a payload's JSON text may hold a `{ "$env": NAME }` reference: false means it certainly
 * holds none, so resolveEnvRefs would return it unchanged and the worker may parse it only when a
 * handler reads it. The text is PostgreSQL's jsonb output, which prints every key as it is (no
 * escapes in "$env"); any other text that names "$env" counts as a possible reference.
 */
export function jsonMayReferToEnv(json: string): boolean {
  return json.includes('"$env"');
}

/**
 * Replace every `{ "$env": "NAME" }` with the named environment variable's value, for the worker
 * right before it calls a handler. A missing variable is an error naming it.
 */
export function resolveEnvRefs<T>(value: T, env: Record<string, string | undefined> = process.env): T {
  // A payload without an object or array in it holds no reference: nothing to walk.
  if (typeof value !== "object" || value === null) return value;
  return resolveWalk(value, env) as T;
}

// Module-level, not a closure per call: this runs for every run a worker starts.
function resolveWalk(v: unknown, env: Record<string, string | undefined>): unknown {
  if (isEnvRef(v)) {
    const name = (v as { $env: string }).$env;
    const resolved = env[name];
    if (resolved === undefined) throw new Error(`payload refers to environment variable ${name}, which is not set`);
    return resolved;
  }
  // Copies only what holds a reference: most payloads hold none and come back as they are, with
  // nothing allocated.
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const w = resolveWalk(v[i], env);
      if (w !== v[i]) (out ??= v.slice())[i] = w;
    }
    return out ?? v;
  }
  if (isObject(v)) {
    let out: Record<string, unknown> | undefined;
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const w = resolveWalk(v[k], env);
      if (w !== v[k]) (out ??= { ...v })[k] = w;
    }
    return out ?? v;
  }
  return v;
}

/**
 * Secrets are never shorter than this: a value of one to three characters ("1", "yes") is masked
 * where a sensitive key names it, but not wherever it appears in a program's output, which it would
 * make unreadable.
 */
export const MIN_MASKED_VALUE_LENGTH = 4;

/**
 * The secret values a payload puts in a handler's hands, to mask in what the attempt prints: every
 * string under a sensitive key (at any depth, header pairs included) and every value a
 * `{ "$env": NAME }` reference resolves to. Longest first, so a secret that holds another is
 * masked whole. Unset references are skipped (the attempt fails on them anyway).
 */
export function secretValuesOf(payload: unknown, env: Record<string, string | undefined> = process.env): string[] {
  const found = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === "string" && v.length >= MIN_MASKED_VALUE_LENGTH && v !== MASK) found.add(v);
  };
  const walk = (v: unknown, secret: boolean): void => {
    if (isEnvRef(v)) return add(env[(v as { $env: string }).$env]);
    if (Array.isArray(v)) return v.forEach((w) => walk(w, secret));
    if (!isObject(v)) return secret ? add(v) : undefined;
    const pairName = typeof v.name === "string" ? v.name : typeof v.key === "string" ? v.key : undefined;
    for (const [k, w] of Object.entries(v)) walk(w, secret || isSensitiveKey(k) || (k === "value" && pairName !== undefined && isSensitiveKey(pairName)));
  };
  walk(payload, false);
  return [...found].sort((a, b) => b.length - a.length);
}

/**
 * `KEY=value`, `KEY: value`, `"key": "value"` where KEY is a sensitive key (the same words as
 * isSensitiveKey), with an optional auth scheme (`Authorization: Bearer …`) kept visible.
 */
const SENSITIVE_ASSIGNMENT = new RegExp(`((?:${SENSITIVE.source})[\\w.-]*["']?\\s*[:=]\\s*["']?)((?:bearer|basic|digest|token)\\s+)?([^\\s"',;&]+)`, "gi");

/**
 * Mask secrets in free text (a program's stdout, a log line): every occurrence of one of `secrets`
 * (from secretValuesOf), and the value of every assignment to a sensitive key. NUL characters,
 * which PostgreSQL text cannot hold, become U+FFFD.
 */
export function maskText(text: string, secrets: readonly string[]): string {
  let out = text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
  for (const s of secrets) if (out.includes(s)) out = out.replaceAll(s, MASK);
  return out.replace(SENSITIVE_ASSIGNMENT, (match: string, key: string, scheme: string | undefined, value: string, offset: number, whole: string) => {
    // A fencing token (SLOTKEEPER_FENCING_TOKEN=3, X-Fencing-Token: 3) is a counter, not a secret.
    if (value === MASK || NOT_SECRET_BEFORE.test(whole.slice(Math.max(0, offset - 8), offset))) return match;
    return `${key}${scheme ?? ""}${MASK}`;
  });
}

/** What, right before a sensitive word, makes it name no secret: the fencing token. */
const NOT_SECRET_BEFORE = /fencing[-_ ]?$/i;

/**
 * A copy of a handler's result or log fields fit to show and store: sensitive keys masked as in
 * maskSecrets, and every string (keys too) passed through maskText.
 */
export function maskOutputValue<T>(value: T, secrets: readonly string[]): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return maskText(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (!isObject(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, w] of Object.entries(v)) out[maskText(k, [])] = walk(w);
    return out;
  };
  return walk(maskSecrets(value)) as T;
}
