import { SlotkeeperApiError } from "./api-error";

/** Fetch JSON from the API, turning its error shape into a SlotkeeperApiError. */
export async function fetchJson<T>(url: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
  const { json, ...rest } = init;
  const res = await fetch(url, {
    ...rest,
    headers: { accept: "application/json", ...(json !== undefined ? { "content-type": "application/json" } : {}), ...rest.headers },
    body: json !== undefined ? JSON.stringify(json) : rest.body,
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    // The session ended (signed out elsewhere, password changed, disabled): sign in again.
    if (res.status === 401 && typeof window !== "undefined" && !url.startsWith("/api/auth/") && window.location.pathname !== "/login") {
      // A full load on purpose: it drops every cached answer of the ended session.
      // eslint-disable-next-line @next/next/no-location-assign-relative-destination
      window.location.assign(`/login?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
    }
    const e = body?.error;
    throw new SlotkeeperApiError(e?.message ?? `request failed with ${res.status}`, res.status, e?.code ?? "http", e?.field);
  }
  return body as T;
}

/** How often live views poll, in ms. */
export const LIVE_REFRESH_MS = 2_000;
