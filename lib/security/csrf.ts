import { AppError } from "../errors";
import { requestHost, type Credential } from "../auth/access";
import type { AccessSettings } from "../auth/settings";

/**
 * Refuse a state-changing request that a browser could have sent from another site. Route
 * handlers get no CSRF protection from Next.js, so every mutation passes through here:
 *
 * - bearer tokens are exempt from the Origin rules: a browser never attaches them on its own;
 * - cookie sessions need an Origin equal to the console's own (missing or "null" is refused);
 * - loopback callers (no credentials configured) need a matching Origin when one is sent — a page
 *   on any site can make the local operator's browser POST to 127.0.0.1 — while curl and scripts,
 *   which send neither Origin nor Sec-Fetch-Site, may omit it;
 * - Sec-Fetch-Site, when present, must be same-origin (or none: typed by the user);
 * - a body must be JSON; a body-less request may omit the content type. Browsers cannot send a
 *   cross-site application/json request without a CORS preflight, which we never grant.
 */
export function checkMutationRequest(req: Request, credential: Credential, settings: Pick<AccessSettings, "trustProxy">): void {
  checkContentType(req);
  if (credential === "bearer") return;
  const site = req.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") throw new AppError("forbidden", `cross-site request refused (Sec-Fetch-Site: ${site})`);
  const origin = req.headers.get("origin");
  if (origin === null) {
    if (credential === "cookie") throw new AppError("forbidden", "request refused: a signed-in request must carry an Origin header");
    if (site !== null) throw new AppError("forbidden", "request refused: a browser request must carry an Origin header");
    return;
  }
  if (origin === "null") throw new AppError("forbidden", "request refused: Origin \"null\" is not the console");
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    throw new AppError("forbidden", "request refused: malformed Origin header");
  }
  const own = requestHost(req, settings);
  if (originHost.toLowerCase() !== own.toLowerCase()) throw new AppError("forbidden", `cross-origin request refused (Origin ${origin} is not this console, ${own})`);
}

/** A body must be application/json; no body may come without a content type. */
function checkContentType(req: Request): void {
  const type = req.headers.get("content-type");
  if (type !== null) {
    if (!/^application\/json\s*(;|$)/i.test(type.trim())) throw new AppError("invalid", "a state-changing request must be JSON (content-type: application/json) or have no body", "content-type");
    return;
  }
  const length = req.headers.get("content-length");
  const hasBody = (length !== null && length.trim() !== "0") || req.headers.get("transfer-encoding") !== null;
  if (hasBody) throw new AppError("invalid", "a request body needs content-type: application/json", "content-type");
}
