import { z } from "zod";

/**
 * Access-control settings, read from the environment. Kept beside the auth code rather than in
 * lib/config.ts because only the web process needs them; docs/operations.md's configuration table lists them.
 */
export type AccessSettings = {
  /** "loopback-only" when no password is configured: only this machine may use the console. */
  mode: "loopback-only" | "credentials";
  operatorPassword: string | undefined;
  viewerPassword: string | undefined;
  sessionHours: number;
  /** Trust X-Forwarded-For / X-Forwarded-Host / X-Forwarded-Proto from a reverse proxy. */
  trustProxy: boolean;
};

const bool = z.enum(["true", "false", "1", "0", "yes", "no"]).transform((v) => v === "true" || v === "1" || v === "yes");

const accessEnvSchema = z.object({
  /** Password of the `operator` account; setting it turns on credentials mode. */
  SLOTKEEPER_OPERATOR_PASSWORD: z.string().min(8, "must be at least 8 characters").max(1024).optional(),
  /** Password of the `viewer` account (read-only); needs the operator password too. */
  SLOTKEEPER_VIEWER_PASSWORD: z.string().min(8, "must be at least 8 characters").max(1024).optional(),
  /** How long a console session lasts. */
  SLOTKEEPER_SESSION_HOURS: z.coerce.number().min(0.01).max(24 * 365).default(12),
  /** Behind a reverse proxy: take the client address from its X-Forwarded-For. */
  SLOTKEEPER_TRUST_PROXY: bool.default(false),
});

export const ACCESS_ENV_KEYS = Object.keys(accessEnvSchema.shape) as (keyof typeof accessEnvSchema.shape)[];

/** Thrown for an invalid access setting; the message names the variable. */
export class AccessConfigError extends Error {}

/** Parse the access settings from an environment, failing fast with the offending variable's name. */
export function loadAccessSettings(env: Record<string, string | undefined> = process.env): AccessSettings {
  const cleaned = Object.fromEntries(ACCESS_ENV_KEYS.map((k) => [k, env[k]]).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = accessEnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AccessConfigError(`invalid ${String(issue.path[0])}: ${issue.message}`);
  }
  const e = parsed.data;
  if (e.SLOTKEEPER_VIEWER_PASSWORD && !e.SLOTKEEPER_OPERATOR_PASSWORD) {
    throw new AccessConfigError("invalid SLOTKEEPER_VIEWER_PASSWORD: set SLOTKEEPER_OPERATOR_PASSWORD too, or nobody could operate");
  }
  if (e.SLOTKEEPER_VIEWER_PASSWORD && e.SLOTKEEPER_VIEWER_PASSWORD === e.SLOTKEEPER_OPERATOR_PASSWORD) {
    throw new AccessConfigError("invalid SLOTKEEPER_VIEWER_PASSWORD: must differ from SLOTKEEPER_OPERATOR_PASSWORD (the password decides the role)");
  }
  const mode = e.SLOTKEEPER_OPERATOR_PASSWORD ? "credentials" : "loopback-only";
  return {
    mode,
    operatorPassword: e.SLOTKEEPER_OPERATOR_PASSWORD,
    viewerPassword: e.SLOTKEEPER_VIEWER_PASSWORD,
    sessionHours: e.SLOTKEEPER_SESSION_HOURS,
    trustProxy: e.SLOTKEEPER_TRUST_PROXY,
  };
}

let cached: { key: string; settings: AccessSettings } | undefined;

/** The current process's access settings, re-read only when one of its variables changes. */
export function getAccessSettings(): AccessSettings {
  const key = ACCESS_ENV_KEYS.map((k) => process.env[k] ?? "").join("\0");
  if (cached?.key !== key) cached = { key, settings: loadAccessSettings(process.env) };
  return cached.settings;
}
