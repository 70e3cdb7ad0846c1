"use client";

import { queryOptions, useQuery } from "@tanstack/react-query";
import { fetchJson } from "./api";

/** Who the console is signed in as, and how access is configured (GET /api/me). */
export type Me = {
  actor: {
    name: string;
    kind: "user" | "token" | "local" | "system";
    role: "viewer" | "operator" | "admin";
    scope: "read" | "operate" | "admin";
    /** Set for a tag-restricted token. */
    scheduleTags: string[] | null;
  };
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
  const role = useMe().data?.actor.role;
  return role === "operator" || role === "admin";
}

/** Whether the current user may manage API tokens (the admin role). */
export function useIsAdmin(): boolean {
  return useMe().data?.actor.role === "admin";
}
