/**
 * What a caller may do. People have a role, API tokens have a scope, and the two line up one to
 * one, so every route asks a single question — does the caller's scope cover what this route
 * needs? — whoever the caller is:
 *
 * | role       | scope     | may                                                        |
 * | ---------- | --------- | ---------------------------------------------------------- |
 * | `viewer`   | `read`    | read everything (a tag-restricted token: its schedules)     |
 * | `operator` | `operate` | also change schedules, runs and alert channels              |
 * | `admin`    | `admin`   | also mint, list and revoke API tokens; manage people         |
 *
 * The local operator of a loopback-only install and the `operator` account of
 * SLOTKEEPER_OPERATOR_PASSWORD are admins: they are how an installation is first managed.
 */

/** Token scopes, weakest first: each includes the ones before it. */
export const SCOPES = ["read", "operate", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

/** People's roles, weakest first, in the same order as SCOPES. */
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** The scope a role grants. */
export function scopeOfRole(role: Role): Scope {
  return SCOPES[ROLES.indexOf(role)];
}

/** The role a scope stands for (how a token appears where a role is shown). */
export function roleOfScope(scope: Scope): Role {
  return ROLES[SCOPES.indexOf(scope)];
}

/** Whether a caller with `granted` may do what needs `needed`. */
export function scopeCovers(granted: Scope, needed: Scope): boolean {
  return SCOPES.indexOf(granted) >= SCOPES.indexOf(needed);
}

/** Read a stored scope or role, refusing anything unknown (a bad row grants nothing more than read). */
export function toScope(value: string): Scope {
  return (SCOPES as readonly string[]).includes(value) ? (value as Scope) : "read";
}

/** What a route tells a caller whose scope is too weak. */
export function scopeRefusal(needed: Scope): string {
  return needed === "admin"
    ? "this action needs the admin role (an API token with the admin scope)"
    : needed === "operate"
      ? "this action needs the operator role (an API token with the operate scope)"
      : "this action needs read access";
}
