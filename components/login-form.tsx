"use client";

import { useState, type FormEvent } from "react";
import { fetchJson } from "@/lib/client/api";
import { SlotkeeperApiError } from "@/lib/client/api-error";
import { useHydrated } from "@/lib/client/hydrated";

/** Only a path on this console may be the target after sign-in (no open redirect). */
function safeNext(next: string | undefined): string {
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/";
}

/** The select's value for "a person's own account", which shows the login-name field. */
const PERSON = "__person";

/** A labelled, required text input of the form. */
function TextField(p: { label: string; name: string; autoComplete: string; testId: string; value: string; onChange: (v: string) => void; type?: "text" | "password" }) {
  return (
    <label className="block text-sm">
      <span className="text-slate-700">{p.label}</span>
      <input
        type={p.type ?? "text"}
        name={p.name}
        autoComplete={p.autoComplete}
        data-testid={p.testId}
        value={p.value}
        onChange={(e) => p.onChange(e.target.value)}
        className="mt-1 block w-full rounded-md border border-slate-300 px-3 py-2"
        required
      />
    </label>
  );
}

/** The sign-in form: account (operator, viewer, or a person's login name) and password; goes to `next` on success. */
export function LoginForm({ next, hasViewer }: { next?: string; hasViewer: boolean }) {
  const [account, setAccount] = useState("operator");
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const user = account === PERSON ? name.trim() : account;
      await fetchJson("/api/auth/login", { method: "POST", json: { user, password } });
      // A full load, so every cached query is fetched again as the new user.
      window.location.assign(safeNext(next));
    } catch (err) {
      setError(err instanceof SlotkeeperApiError ? err.message : "could not sign in");
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} className="max-w-sm rounded-lg border border-slate-200 bg-white p-6" data-testid="login-form">
      <fieldset disabled={!hydrated} className="space-y-4">
        <label className="block text-sm">
          <span className="text-slate-700">Account</span>
          <select name="account" data-testid="login-user" value={account} onChange={(e) => setAccount(e.target.value)} className="mt-1 block w-full rounded-md border border-slate-300 px-3 py-2">
            <option value="operator">operator</option>
            {hasViewer ? <option value="viewer">viewer</option> : null}
            <option value={PERSON}>my own account…</option>
          </select>
        </label>
        {account === PERSON ? <TextField label="Login name" name="user" autoComplete="username" testId="login-name" value={name} onChange={setName} /> : null}
        <TextField label="Password" type="password" name="password" autoComplete="current-password" testId="login-password" value={password} onChange={setPassword} />
        {error ? (
          <p role="alert" data-testid="login-error" className="text-sm text-red-700">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy} data-testid="login-submit" className="rounded-md bg-slate-900 px-4 py-2 text-sm text-white disabled:opacity-50">
          Sign in
        </button>
      </fieldset>
    </form>
  );
}
