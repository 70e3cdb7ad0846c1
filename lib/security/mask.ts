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
