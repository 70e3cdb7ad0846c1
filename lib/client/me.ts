"use client";

import { queryOptions, useQuery } from "@tanstack/react-query";
import { fetchJson } from "./api";

/** Who the console is signed in as, and how access is configured (GET /api/me). */
export type Me = {
  actor: { name: string; kind: "user" | "token" | "local" | "system"; role: "viewer" | "operator" };
  access: "loopback-only" | "credentials";
};

/** Query options for GET /api/me; changes only on sign-in and sign-out. */
export const meQuery = queryOptions({
  queryKey: ["me"],
  queryFn: ({ signal }) => fetchJson<Me>("/api/me", { signal }),
  staleTime: 60_000,
  retry: false,
});

/** The current user (undefined while loading or when not signed in). */
export function useMe() {
  return useQuery(meQuery);
}

/** Whether the current user may change things; false until that is known, so buttons never flash on. */
export function useCanOperate(): boolean {
  return useMe().data?.actor.role === "operator";
}
