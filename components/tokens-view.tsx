"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { SlotkeeperApiError } from "@/lib/client/api-error";
import { useIsAdmin, useMe } from "@/lib/client/me";
import { createToken, revokeToken, tokensKey, tokensQuery, type TokenView } from "@/lib/client/tokens";
import { Button } from "./ui/button";
import { PageHeader } from "./ui/page-header";
import { EmptyState, ErrorState, Loading } from "./ui/states";
import { Time } from "./ui/time";

const SCOPE_HELP: Record<TokenView["scope"], string> = {
  read: "read: lists and reads everything it can see",
  operate: "operate: also creates, edits, pauses, runs and re-queues",
  admin: "admin: also creates and revokes API tokens",
};

const field = "mt-1 block rounded-md border border-slate-300 px-2 py-1 text-sm";

function status(t: TokenView, nowMs: number): { text: string; className: string } {
  if (t.revokedAt) return { text: "revoked", className: "text-red-700" };
  if (t.expiresAt && Date.parse(t.expiresAt) <= nowMs) return { text: "expired", className: "text-amber-700" };
  return { text: "active", className: "" };
}

/** Settings → API tokens: list, create (secret shown once), revoke. Admins only may see and change them. */
export function TokensView() {
  const queryClient = useQueryClient();
  const me = useMe();
  const isAdmin = useIsAdmin();
  const tokens = useQuery({ ...tokensQuery, enabled: isAdmin });
  const [name, setName] = useState("");
  const [scope, setScope] = useState<TokenView["scope"]>("read");
  const [expires, setExpires] = useState("");
  const [tags, setTags] = useState("");
  const [secret, setSecret] = useState<{ name: string; token: string } | null>(null);
  const [nowMs] = useState(() => Date.now());
  const create = useMutation({
    mutationFn: createToken,
    onSuccess: (res) => {
      setSecret({ name: res.tokenInfo.name, token: res.token });
      setName("");
      setExpires("");
      setTags("");
      void queryClient.invalidateQueries({ queryKey: tokensKey });
    },
  });
  const revoke = useMutation({ mutationFn: revokeToken, onSuccess: () => queryClient.invalidateQueries({ queryKey: tokensKey }) });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSecret(null);
    const scheduleTags = tags.split(",").map((t) => t.trim()).filter(Boolean);
    create.mutate({ name, scope, expiresAt: expires ? new Date(expires).toISOString() : null, scheduleTags });
  };

  const header = <PageHeader title="API tokens" description="For scripts and automation: send `Authorization: Bearer <token>`. Stored hashed; the secret is shown once." />;
  if (me.isPending) return <>{header}<Loading /></>;
  if (!isAdmin) {
    return (
      <>
        {header}
        <p className="mb-6 text-sm text-slate-600" data-testid="tokens-read-only">Only admins can see, create or revoke API tokens.</p>
      </>
    );
  }
  return (
    <>
      {header}
      <form onSubmit={submit} className="mb-6 flex flex-wrap items-end gap-3" data-testid="token-create-form">
        <label className="text-xs text-slate-600">
          Name
          <input data-testid="token-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} className={field} />
        </label>
        <label className="text-xs text-slate-600">
          Scope
          <select data-testid="token-scope" value={scope} onChange={(e) => setScope(e.target.value as TokenView["scope"])} className={field}>
            <option value="read">read</option>
            <option value="operate">operate</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <label className="text-xs text-slate-600">
          Expires (optional)
          <input data-testid="token-expires" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} className={field} />
        </label>
        <label className="text-xs text-slate-600">
          Only schedules tagged (optional, comma-separated)
          <input data-testid="token-tags" value={tags} onChange={(e) => setTags(e.target.value)} placeholder="billing, reports" className={field} />
        </label>
        <Button type="submit" variant="primary" data-testid="token-create" disabled={create.isPending}>
          Create token
        </Button>
        <p className="basis-full text-xs text-slate-500">{SCOPE_HELP[scope]}. A tag-restricted token sees and changes only schedules with one of its tags, and their runs.</p>
        {create.error ? <p role="alert" data-testid="token-error" className="text-sm text-red-700">{create.error instanceof SlotkeeperApiError ? create.error.message : "could not create the token"}</p> : null}
      </form>
      {secret ? (
        <div role="status" data-testid="token-secret-box" className="mb-6 rounded-lg border border-emerald-300 bg-emerald-50 p-4 text-sm">
          <p className="font-medium">Token “{secret.name}” created. Copy it now: it will not be shown again.</p>
          <code data-testid="token-secret" className="mt-2 block break-all rounded bg-white p-2 font-mono text-xs">{secret.token}</code>
        </div>
      ) : null}
      {tokens.isPending ? (
        <Loading />
      ) : tokens.isError ? (
        <ErrorState error={tokens.error} retry={() => tokens.refetch()} />
      ) : !tokens.data.length ? (
        <EmptyState title="No API tokens yet." testId="tokens-empty" />
      ) : (
        <div className="relative overflow-x-auto">
        <table className="w-full rounded-lg border border-slate-200 bg-white text-left text-sm" data-testid="tokens-table">
          <thead className="text-xs uppercase text-slate-500">
            <tr>
              <th className="p-2">Name</th>
              <th className="p-2">Scope</th>
              <th className="p-2">Schedules</th>
              <th className="p-2">Expires</th>
              <th className="p-2">Created</th>
              <th className="p-2">Last used</th>
              <th className="p-2">Status</th>
              <th className="p-2" />
            </tr>
          </thead>
          <tbody>
            {tokens.data.map((t) => {
              const st = status(t, nowMs);
              return (
                <tr key={t.id} data-testid="token-row" className="border-t border-slate-100">
                  <td className="p-2" data-testid="token-row-name">{t.name}</td>
                  <td className="p-2" data-testid="token-row-scope">{t.scope}</td>
                  <td className="p-2" data-testid="token-row-tags">{t.scheduleTags.length ? `tagged ${t.scheduleTags.join(", ")}` : "all"}</td>
                  <td className="p-2">
                    <Time value={t.expiresAt} fallback="never" />
                  </td>
                  <td className="p-2">
                    <Time value={t.createdAt} /> <span className="text-xs text-slate-500">by {t.createdBy}</span>
                  </td>
                  <td className="p-2" data-testid="token-row-last-used">
                    <Time value={t.lastUsedAt} fallback="never" />
                  </td>
                  <td className={`p-2 ${st.className}`} data-testid="token-row-status">{st.text}</td>
                  <td className="p-2 text-right">
                    {!t.revokedAt ? (
                      <Button size="sm" variant="danger" data-testid="token-revoke" disabled={revoke.isPending} onClick={() => window.confirm(`Revoke token “${t.name}”? Scripts using it stop working at once.`) && revoke.mutate(t.id)}>
                        Revoke
                      </Button>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        </div>
      )}
    </>
  );
}
