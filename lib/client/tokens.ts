import { queryOptions } from "@tanstack/react-query";
import type { TokenView } from "../auth/tokens";
import { fetchJson } from "./api";

export type { TokenView };

export const tokensKey = ["tokens"] as const;

/** Every API token (never the secrets). */
export const tokensQuery = queryOptions({
  queryKey: tokensKey,
  queryFn: async ({ signal }) => (await fetchJson<{ tokens: TokenView[] }>("/api/tokens", { signal })).tokens,
});

/** Create a token; the answer holds the secret, which is never shown again. */
export const createToken = (input: { name: string; scope: TokenView["scope"]; expiresAt?: string | null; scheduleTags?: string[] }) =>
  fetchJson<{ token: string; tokenInfo: TokenView }>("/api/tokens", { method: "POST", json: input });

/** Revoke a token; it stops working at once. */
export const revokeToken = (id: number) => fetchJson<{ tokenInfo: TokenView }>(`/api/tokens/${id}/revoke`, { method: "POST" });
