import type { Actor } from "../audit/record";
import { AppError } from "../errors";
import { clientAddress, isLoopbackHost, OUTBOUND_REFUSAL } from "./client-address";
import { readSessionCookie } from "./session";
import type { AccessSettings } from "./settings";

/** How the caller proved who it is; it decides which cross-site checks a mutation needs. */
export type Credential = "bearer" | "cookie" | "loopback";

/** A caller who may use the API: the actor recorded in the audit log and how it authenticated. */
export type Access = { actor: Actor; credential: Credential };

/** Looks a bearer token up (lib/auth/tokens.ts findTokenActor, bound to the database). */
export type TokenLookup = (token: string) => Promise<Actor | null>;

/** Looks a session cookie up (lib/auth/sessions.ts findSessionActor, bound to the database). */
export type SessionLookup = (sessionId: string) => Promise<Actor | null>;

/**
 * The local operator: whoever can reach the loopback interface when no credentials exist — a
 * person at this machine, and never Slotkeeper's own outbound requests (OUTBOUND_MARKER). The
 * installation's admin until accounts exist.
 */
export const LOCAL_ACTOR: Actor = { name: "local", kind: "local", role: "admin" };

/** What a refused client is told: how to get in. */
export const LOOPBACK_ONLY_MESSAGE =
  "Slotkeeper has no credentials configured, so it only answers requests from this machine (loopback, e.g. http://localhost). " +
  "To allow other clients, set SLOTKEEPER_OPERATOR_PASSWORD (and optionally SLOTKEEPER_VIEWER_PASSWORD) and restart, " +
  "or create an API token on this machine (Settings → API tokens) and send it as `Authorization: Bearer <token>`. " +
  "Behind a reverse proxy on this machine, set SLOTKEEPER_TRUST_PROXY=true.";

/** The request's own Host (X-Forwarded-Host when a trusted proxy set it), or the URL's host. */
export function requestHost(req: Request, settings: Pick<AccessSettings, "trustProxy">): string {
  const forwarded = settings.trustProxy ? req.headers.get("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
  return forwarded || req.headers.get("host") || new URL(req.url).host;
}

/** Whether a loopback-only console may serve this request; the refusal reason when not. */
export function loopbackRefusal(req: Request, settings: AccessSettings): string | null {
  const client = clientAddress(req.headers, settings);
  // Said first, so it survives wherever a caller keeps only the start of the answer (a run's error).
  if (client.reason === OUTBOUND_REFUSAL) return `Refused: ${OUTBOUND_REFUSAL}.`;
  if (!client.loopback) return `${LOOPBACK_ONLY_MESSAGE}${client.reason ? ` (${client.reason})` : client.address ? ` (your address: ${client.address})` : ""}`;
  // DNS rebinding: a page on evil.example that re-points its name at 127.0.0.1 reaches us from
  // loopback, but its requests carry Host: evil.example.
  const host = requestHost(req, settings);
  if (!isLoopbackHost(host)) return `${LOOPBACK_ONLY_MESSAGE} (Host "${host}" is not a loopback name; open the console as http://localhost:<port>)`;
  return null;
}

/**
 * Who is calling, or an AppError: 401 for a bad or missing credential, 403 for a client outside
 * loopback when no credentials are configured. A bearer token works from anywhere in any mode; a
 * session cookie (its row in the sessions table) only in credentials mode; loopback alone only in
 * loopback-only mode.
 */
export async function resolveAccess(req: Request, settings: AccessSettings, findToken: TokenLookup, findSession: SessionLookup = async () => null): Promise<Access> {
  const authz = req.headers.get("authorization");
  if (authz !== null) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    if (!m) throw new AppError("unauthorized", "the Authorization header must be `Bearer <token>`");
    const actor = await findToken(m[1]);
    if (!actor) throw new AppError("unauthorized", "the API token is unknown or revoked");
    return { actor, credential: "bearer" };
  }
  if (settings.mode === "credentials") {
    const id = readSessionCookie(req, settings);
    const actor = id ? await findSession(id) : null;
    if (!actor) throw new AppError("unauthorized", "sign in at /login, or send an API token as `Authorization: Bearer <token>`");
    return { actor, credential: "cookie" };
  }
  const refusal = loopbackRefusal(req, settings);
  if (refusal) throw new AppError("forbidden", refusal);
  return { actor: LOCAL_ACTOR, credential: "loopback" };
}
