import { queryOptions } from "@tanstack/react-query";
import type { PersonView } from "../auth/people";
import { fetchJson } from "./api";

export type { PersonView };

export const peopleKey = ["people"] as const;

/** Every person (never a password hash). */
export const peopleQuery = queryOptions({
  queryKey: peopleKey,
  queryFn: async ({ signal }) => (await fetchJson<{ people: PersonView[] }>("/api/people", { signal })).people,
});

/** Add a person. */
export const createPerson = (input: { name: string; displayName?: string | null; role: PersonView["role"]; password: string }) =>
  fetchJson<{ person: PersonView }>("/api/people", { method: "POST", json: input });

/** Change a person's role, display name, password (a reset) or disabled state. */
export const updatePerson = ({ name, ...patch }: { name: string; role?: PersonView["role"]; displayName?: string | null; password?: string; disabled?: boolean }) =>
  fetchJson<{ person: PersonView }>(`/api/people/${encodeURIComponent(name)}`, { method: "PATCH", json: patch });

/** Change one's own password; every other session of theirs ends. */
export const changeOwnPassword = (input: { currentPassword: string; newPassword: string }) => fetchJson<void>("/api/me/password", { method: "POST", json: input });
