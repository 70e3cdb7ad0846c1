"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { SlotkeeperApiError } from "@/lib/client/api-error";
import { useIsAdmin, useMe } from "@/lib/client/me";
import { changeOwnPassword, createPerson, peopleKey, peopleQuery, updatePerson, type PersonView } from "@/lib/client/people";
import { Button } from "./ui/button";
import { EmptyState, ErrorState, Loading } from "./ui/states";
import { Time } from "./ui/time";

const ROLE_HELP: Record<PersonView["role"], string> = {
  viewer: "viewer: reads everything",
  operator: "operator: also changes schedules, runs and alert channels",
  admin: "admin: also manages people, API tokens and settings",
};

const field = "mt-1 block rounded-md border border-slate-300 px-2 py-1 text-sm";
const message = (err: unknown, fallback: string) => (err instanceof SlotkeeperApiError ? err.message : fallback);

/** One person's row: role select, disable / enable, and a password reset that opens inline. */
function PersonRow({ person, self }: { person: PersonView; self: boolean }) {
  const queryClient = useQueryClient();
  const [resetting, setResetting] = useState(false);
  const [password, setPassword] = useState("");
  const update = useMutation({
    mutationFn: updatePerson,
    onSuccess: () => {
      setResetting(false);
      setPassword("");
      void queryClient.invalidateQueries({ queryKey: peopleKey });
    },
  });
  const disabled = person.disabledAt !== null;
  const reset = (e: FormEvent) => {
    e.preventDefault();
    update.mutate({ name: person.name, password });
  };
  return (
    <tr data-testid="person-row" data-name={person.name} className="border-t border-slate-100 align-top">
      <td className="p-2">
        <span data-testid="person-row-name" className="font-medium">{person.name}</span>
        {person.displayName ? <span data-testid="person-row-display-name" className="block text-xs text-slate-500">{person.displayName}</span> : null}
      </td>
      <td className="p-2">
        <select
          aria-label={`Role of ${person.name}`}
          data-testid="person-role"
          value={person.role}
          disabled={self || update.isPending}
          onChange={(e) => update.mutate({ name: person.name, role: e.target.value as PersonView["role"] })}
          className="rounded-md border border-slate-300 px-2 py-1 text-sm"
        >
          <option value="viewer">viewer</option>
          <option value="operator">operator</option>
          <option value="admin">admin</option>
        </select>
      </td>
      <td className={`p-2 ${disabled ? "text-red-700" : ""}`} data-testid="person-status">
        {disabled ? "disabled" : "active"}
      </td>
      <td className="p-2">
        <Time value={person.createdAt} />
      </td>
      <td className="p-2 text-right">
        <div className="flex flex-wrap justify-end gap-2">
          <Button size="sm" data-testid="person-reset" onClick={() => setResetting((v) => !v)}>
            Reset password
          </Button>
          {!self ? (
            <Button
              size="sm"
              variant={disabled ? "secondary" : "danger"}
              data-testid={disabled ? "person-enable" : "person-disable"}
              disabled={update.isPending}
              onClick={() => (disabled || window.confirm(`Disable ${person.name}? Their sessions end at once.`)) && update.mutate({ name: person.name, disabled: !disabled })}
            >
              {disabled ? "Enable" : "Disable"}
            </Button>
          ) : null}
        </div>
        {resetting ? (
          <form onSubmit={reset} className="mt-2 flex justify-end gap-2" data-testid="person-reset-form">
            <input
              type="password"
              aria-label={`New password for ${person.name}`}
              autoComplete="new-password"
              data-testid="person-reset-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              required
              minLength={12}
              className="rounded-md border border-slate-300 px-2 py-1 text-sm"
            />
            <Button type="submit" size="sm" variant="primary" data-testid="person-reset-save" disabled={update.isPending}>
              Save
            </Button>
          </form>
        ) : null}
        {update.error ? <p role="alert" data-testid="person-error" className="mt-1 text-sm text-red-700">{message(update.error, "could not change this person")}</p> : null}
      </td>
    </tr>
  );
}

/** A person's own password, for whoever is signed in with their own account. */
function OwnPassword() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const change = useMutation({
    mutationFn: changeOwnPassword,
    onSuccess: () => {
      setCurrent("");
      setNext("");
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    change.mutate({ currentPassword: current, newPassword: next });
  };
  return (
    <form onSubmit={submit} className="mb-6 flex flex-wrap items-end gap-3" data-testid="own-password-form">
      <label className="text-xs text-slate-600">
        Current password
        <input type="password" autoComplete="current-password" data-testid="own-password-current" value={current} onChange={(e) => setCurrent(e.target.value)} required className={field} />
      </label>
      <label className="text-xs text-slate-600">
        New password (at least 12 characters)
        <input type="password" autoComplete="new-password" data-testid="own-password-new" value={next} onChange={(e) => setNext(e.target.value)} required minLength={12} className={field} />
      </label>
      <Button type="submit" variant="primary" data-testid="own-password-save" disabled={change.isPending}>
        Change password
      </Button>
      <p className="basis-full text-xs text-slate-500">Your other sessions end; this one stays signed in.</p>
      {change.isSuccess ? <p role="status" data-testid="own-password-done" className="text-sm text-emerald-700">Password changed.</p> : null}
      {change.error ? <p role="alert" data-testid="own-password-error" className="text-sm text-red-700">{message(change.error, "could not change the password")}</p> : null}
    </form>
  );
}

/** Settings → People: list, add, change role, disable, reset password. Admins only; anyone signed in as a person changes their own password. */
export function PeopleView() {
  const queryClient = useQueryClient();
  const me = useMe();
  const isAdmin = useIsAdmin();
  const people = useQuery({ ...peopleQuery, enabled: isAdmin });
  const [name, setName] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [role, setRole] = useState<PersonView["role"]>("viewer");
  const [password, setPassword] = useState("");
  const create = useMutation({
    mutationFn: createPerson,
    onSuccess: () => {
      setName("");
      setDisplayName("");
      setPassword("");
      void queryClient.invalidateQueries({ queryKey: peopleKey });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ name, displayName: displayName || null, role, password });
  };

  const actor = me.data?.actor;
  // The environment accounts (operator, viewer) have their passwords in the environment.
  const isPerson = me.data?.access === "credentials" && actor?.kind === "user" && actor.name !== "operator" && actor.name !== "viewer";
  const header = (
    <header className="mb-4 mt-10">
      <h2 className="text-xl font-semibold tracking-tight">People</h2>
      <p className="mt-1 text-sm text-slate-600">
        One account per person, with a role. People sign in at /login when passwords are configured (SLOTKEEPER_OPERATOR_PASSWORD); disabling a person or resetting their password ends their sessions at once.
      </p>
    </header>
  );
  if (me.isPending) return <section data-testid="people-section">{header}<Loading /></section>;
  return (
    <section data-testid="people-section">
      {header}
      {isPerson ? <OwnPassword /> : null}
      {!isAdmin ? (
        <p className="mb-6 text-sm text-slate-600" data-testid="people-read-only">Only admins can see, add or change people.</p>
      ) : (
        <>
          <form onSubmit={submit} className="mb-6 flex flex-wrap items-end gap-3" data-testid="person-create-form">
            <label className="text-xs text-slate-600">
              Login name
              <input data-testid="person-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={64} className={field} />
            </label>
            <label className="text-xs text-slate-600">
              Display name (optional)
              <input data-testid="person-display-name" value={displayName} onChange={(e) => setDisplayName(e.target.value)} maxLength={100} className={field} />
            </label>
            <label className="text-xs text-slate-600">
              Role
              <select data-testid="person-new-role" value={role} onChange={(e) => setRole(e.target.value as PersonView["role"])} className={field}>
                <option value="viewer">viewer</option>
                <option value="operator">operator</option>
                <option value="admin">admin</option>
              </select>
            </label>
            <label className="text-xs text-slate-600">
              Password (at least 12 characters)
              <input type="password" autoComplete="new-password" data-testid="person-password" value={password} onChange={(e) => setPassword(e.target.value)} required minLength={12} className={field} />
            </label>
            <Button type="submit" variant="primary" data-testid="person-create" disabled={create.isPending}>
              Add person
            </Button>
            <p className="basis-full text-xs text-slate-500">{ROLE_HELP[role]}.</p>
            {create.error ? <p role="alert" data-testid="person-create-error" className="text-sm text-red-700">{message(create.error, "could not add the person")}</p> : null}
          </form>
          {people.isPending ? (
            <Loading />
          ) : people.isError ? (
            <ErrorState error={people.error} retry={() => people.refetch()} />
          ) : !people.data.length ? (
            <EmptyState title="No people yet." testId="people-empty" />
          ) : (
            <div className="relative overflow-x-auto">
              <table className="w-full rounded-lg border border-slate-200 bg-white text-left text-sm" data-testid="people-table">
                <thead className="text-xs uppercase text-slate-500">
                  <tr>
                    <th className="p-2">Name</th>
                    <th className="p-2">Role</th>
                    <th className="p-2">Status</th>
                    <th className="p-2">Created</th>
                    <th className="p-2" />
                  </tr>
                </thead>
                <tbody>
                  {people.data.map((p) => (
                    <PersonRow key={p.name} person={p} self={isPerson && actor?.name === p.name} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
