import { createHash, timingSafeEqual } from "node:crypto";
import type { AccessSettings } from "./settings";

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Compare two secrets in constant time (hashing first, so lengths never leak or throw). */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** The two accounts: the user name picks the account, its password must match. */
export const ACCOUNTS = ["operator", "viewer"] as const;

/**
 * The role a (user, password) pair signs in as, or null. The `operator` account (the
 * installation's first account, SLOTKEEPER_OPERATOR_PASSWORD) is an admin: it manages API tokens.
 * Both comparisons always run so the time taken does not say which account exists or is configured.
 */
export function checkLogin(settings: AccessSettings, user: string, password: string): "admin" | "viewer" | null {
  const op = secretsEqual(password, settings.operatorPassword ?? "\0unset");
  const vw = secretsEqual(password, settings.viewerPassword ?? "\0unset");
  if (user === "operator" && settings.operatorPassword && op) return "admin";
  if (user === "viewer" && settings.viewerPassword && vw) return "viewer";
  return null;
}
