import { z } from "zod";
import { configDefaults } from "../config";
import { isLoopbackHost } from "./client-address";
import { ROLES, type Role } from "./scopes";

/**
 * Single sign-on with OpenID Connect (lib/auth/oidc.ts), read from the environment of the web
 * processes beside the other access settings (lib/auth/settings.ts); docs/operations.md's
 * configuration table lists every variable and docs/access.md#single-sign-on-openid-connect says how they fit.
 */
export type OidcSettings = {
  /** The provider's issuer identifier; its discovery document is `<issuer>/.well-known/openid-configuration`. */
  issuer: URL;
  clientId: string;
  /** Unset: a public client (PKCE alone, no client authentication at the token endpoint). */
  clientSecret: string | undefined;
  /** Where the provider sends the browser back: SLOTKEEPER_OIDC_REDIRECT_URL, else SLOTKEEPER_PUBLIC_URL + /api/auth/oidc/callback. */
  redirectUrl: URL;
  /** What the login page's button says after "Sign in with". */
  name: string;
  scopes: string;
  /** The claim (of the ID token, else of the userinfo answer) whose value or values pick the role. */
  roleClaim: string;
  /** The role each claim value gives, in the order written; `fallback` is the `*=` entry's role. */
  roleMap: { value: string; role: Role }[];
  fallback: Role | undefined;
  /** Plain http to the provider: allowed only for a provider on this machine's loopback (development, tests). */
  insecureLoopback: boolean;
};

/** Thrown for an invalid OIDC setting; the message names the variable. */
export class OidcConfigError extends Error {}

const oidcEnvSchema = z.object({
  SLOTKEEPER_OIDC_ISSUER: z.string().url().optional(),
  SLOTKEEPER_OIDC_CLIENT_ID: z.string().min(1).max(1000).optional(),
  SLOTKEEPER_OIDC_CLIENT_SECRET: z.string().min(1).max(10_000).optional(),
  SLOTKEEPER_OIDC_REDIRECT_URL: z.string().url().optional(),
  SLOTKEEPER_OIDC_NAME: z.string().trim().min(1).max(60).regex(/^[^\u0000-\u001f\u007f]*$/, "must not contain control characters").optional(),
  SLOTKEEPER_OIDC_SCOPES: z.string().trim().regex(/(^|\s)openid(\s|$)/, "must include openid").max(1000).default("openid profile email"),
  SLOTKEEPER_OIDC_ROLE_CLAIM: z.string().trim().min(1).max(200).default("groups"),
  SLOTKEEPER_OIDC_ROLE_MAP: z.string().max(10_000).optional(),
  SLOTKEEPER_PUBLIC_URL: z.string().url().default(configDefaults.publicUrl),
});

export const OIDC_ENV_KEYS = Object.keys(oidcEnvSchema.shape) as (keyof typeof oidcEnvSchema.shape)[];

/**
 * SLOTKEEPER_OIDC_ROLE_MAP: comma-separated `claim-value=role` entries, and optionally one
 * `*=role` for anyone whose claim matches none (without it they are refused).
 */
export function parseRoleMap(value: string): Pick<OidcSettings, "roleMap" | "fallback"> {
  const roleMap: OidcSettings["roleMap"] = [];
  let fallback: Role | undefined;
  const entries = value.split(",").map((e) => e.trim()).filter((e) => e !== "");
  if (entries.length === 0) throw new OidcConfigError("invalid SLOTKEEPER_OIDC_ROLE_MAP: give comma-separated claim-value=role entries, e.g. sk-admins=admin,sk-ops=operator,*=viewer");
  for (const entry of entries) {
    const eq = entry.lastIndexOf("=");
    const key = eq > 0 ? entry.slice(0, eq).trim() : "";
    const role = eq > 0 ? entry.slice(eq + 1).trim() : "";
    if (!key) throw new OidcConfigError(`invalid SLOTKEEPER_OIDC_ROLE_MAP: ${JSON.stringify(entry)} is not claim-value=role (e.g. sk-ops=operator)`);
    if (!(ROLES as readonly string[]).includes(role)) throw new OidcConfigError(`invalid SLOTKEEPER_OIDC_ROLE_MAP: ${JSON.stringify(entry)} names role ${JSON.stringify(role)}; roles are viewer, operator and admin`);
    if (key === "*") {
      if (fallback) throw new OidcConfigError("invalid SLOTKEEPER_OIDC_ROLE_MAP: `*` is given twice");
      fallback = role as Role;
    } else {
      roleMap.push({ value: key, role: role as Role });
    }
  }
  return { roleMap, fallback };
}

/**
 * The role a claim's value gives: the strongest role among the map's entries that the value (a
 * string, or an array of strings such as a list of groups) matches; the `*` role when none does;
 * null when there is no `*` either (the sign-in is refused).
 */
export function mapRole(settings: Pick<OidcSettings, "roleMap" | "fallback">, claim: unknown): Role | null {
  const values = new Set((Array.isArray(claim) ? claim : [claim]).filter((v): v is string => typeof v === "string"));
  let best: Role | null = null;
  for (const { value, role } of settings.roleMap) {
    if (values.has(value) && (best === null || ROLES.indexOf(role) > ROLES.indexOf(best))) best = role;
  }
  return best ?? settings.fallback ?? null;
}

/**
 * Parse the OIDC settings from an environment: null when SLOTKEEPER_OIDC_ISSUER is unset (no
 * single sign-on); otherwise every setting checked, failing with the offending variable's name.
 * `credentials`: whether sign-in is on at all (SLOTKEEPER_OPERATOR_PASSWORD is set).
 */
export function loadOidcSettings(env: Record<string, string | undefined>, credentials: boolean): OidcSettings | null {
  const cleaned = Object.fromEntries(OIDC_ENV_KEYS.map((k) => [k, env[k]]).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = oidcEnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new OidcConfigError(`invalid ${String(issue.path[0])}: ${issue.message}`);
  }
  const e = parsed.data;
  if (!e.SLOTKEEPER_OIDC_ISSUER) {
    const stray = OIDC_ENV_KEYS.find((k) => k !== "SLOTKEEPER_PUBLIC_URL" && cleaned[k] !== undefined);
    if (stray) throw new OidcConfigError(`invalid ${stray}: set SLOTKEEPER_OIDC_ISSUER too, or unset it (single sign-on needs the provider's issuer)`);
    return null;
  }
  if (!credentials) throw new OidcConfigError("invalid SLOTKEEPER_OIDC_ISSUER: set SLOTKEEPER_OPERATOR_PASSWORD too (sign-in, single sign-on included, is on only in credentials mode)");
  if (!e.SLOTKEEPER_OIDC_CLIENT_ID) throw new OidcConfigError("invalid SLOTKEEPER_OIDC_CLIENT_ID: required with SLOTKEEPER_OIDC_ISSUER (the client id the provider gave this console)");
  if (!e.SLOTKEEPER_OIDC_ROLE_MAP) throw new OidcConfigError("invalid SLOTKEEPER_OIDC_ROLE_MAP: required with SLOTKEEPER_OIDC_ISSUER, e.g. sk-admins=admin,sk-ops=operator,*=viewer");
  const issuer = new URL(e.SLOTKEEPER_OIDC_ISSUER);
  const loopback = isLoopbackHost(issuer.host);
  if (issuer.protocol !== "https:" && !(issuer.protocol === "http:" && loopback)) {
    throw new OidcConfigError("invalid SLOTKEEPER_OIDC_ISSUER: must be https:// (plain http only for a provider on this machine's loopback)");
  }
  const redirectUrl = new URL(e.SLOTKEEPER_OIDC_REDIRECT_URL ?? `${e.SLOTKEEPER_PUBLIC_URL.replace(/\/+$/, "")}/api/auth/oidc/callback`);
  const redirectVar = e.SLOTKEEPER_OIDC_REDIRECT_URL ? "SLOTKEEPER_OIDC_REDIRECT_URL" : "SLOTKEEPER_PUBLIC_URL";
  if (!redirectUrl.pathname.endsWith("/api/auth/oidc/callback")) throw new OidcConfigError(`invalid ${redirectVar}: the redirect URL must end in /api/auth/oidc/callback (got ${redirectUrl.href})`);
  if (redirectUrl.search || redirectUrl.hash) throw new OidcConfigError(`invalid ${redirectVar}: the redirect URL must have no query or fragment`);
  return {
    issuer,
    clientId: e.SLOTKEEPER_OIDC_CLIENT_ID,
    clientSecret: e.SLOTKEEPER_OIDC_CLIENT_SECRET,
    redirectUrl,
    name: e.SLOTKEEPER_OIDC_NAME ?? issuer.hostname,
    scopes: e.SLOTKEEPER_OIDC_SCOPES,
    roleClaim: e.SLOTKEEPER_OIDC_ROLE_CLAIM,
    ...parseRoleMap(e.SLOTKEEPER_OIDC_ROLE_MAP),
    insecureLoopback: issuer.protocol === "http:",
  };
}

let cached: { key: string; settings: OidcSettings | null } | undefined;

/** The current process's OIDC settings (null: not configured), re-read only when one of its variables changes. */
export function getOidcSettings(credentials: boolean): OidcSettings | null {
  const key = [String(credentials), ...OIDC_ENV_KEYS.map((k) => process.env[k] ?? "")].join("\0");
  if (cached?.key !== key) cached = { key, settings: loadOidcSettings(process.env, credentials) };
  return cached.settings;
}
