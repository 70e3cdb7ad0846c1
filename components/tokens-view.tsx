"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ApiError } from "@/lib/client/api";
import { useCanOperate, useMe } from "@/lib/client/me";
import { createToken, revokeToken, tokensKey, tokensQuery } from "@/lib/client/tokens";
import { Button } from "./ui/button";
import { PageHeader } from "./ui/page-header";
import { EmptyState, ErrorState, Loading } from "./ui/states";
import { Time } from "./ui/time";

/** Settings → API tokens: list, create (secret shown once), revoke. Operators only may change them. */
export function TokensView() {
  const queryClient = useQueryClient();
  const me = useMe();
  const canOperate = useCanOperate() && me.data?.actor.kind !== "token";
  const tokens = useQuery(tokensQuery);
  const [name, setName] = useState("");
  const [role, setRole] = useState<"viewer" | "operator">("viewer");
  const [secret, setSecret] = useState<{ name: string; token: string } | null>(null);
  const create = useMutation({
    mutationFn: createToken,
    onSuccess: (res) => {
      setSecret({ name: res.tokenInfo.name, token: res.token });
      setName("");
      void queryClient.invalidateQueries({ queryKey: tokensKey });
    },
  });
  const revoke = useMutation({ mutationFn: revokeToken, onSuccess: () => queryClient.invalidateQueries({ queryKey: tokensKey }) });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSecret(null);
    create.mutate({ name, role });
  };

  return (
    <>
      <PageHeader title="API tokens" description="For scripts and automation: send `Authorization: Bearer <token>`. Stored hashed; the secret is shown once." />
      {canOperate ? (
        <form onSubmit={submit} className="mb-6 flex flex-wrap items-end gap-3" data-testid="token-create-form">
          <label className="text-xs text-slate-600">
            Name
            <input data-testid="token-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} className="mt-1 block rounded-md border border-slate-300 px-2 py-1 text-sm" />
          </label>
          <label className="text-xs text-slate-600">
            Role
            <select data-testid="token-role" value={role} onChange={(e) => setRole(e.target.value as "viewer" | "operator")} className="mt-1 block rounded-md border border-slate-300 px-2 py-1 text-sm">
              <option value="viewer">viewer</option>
              <option value="operator">operator</option>
            </select>
          </label>
          <Button type="submit" variant="primary" data-testid="token-create" disabled={create.isPending}>
            Create token
          </Button>
          {create.error ? <p role="alert" className="text-sm text-red-700">{create.error instanceof ApiError ? create.error.message : "could not create the token"}</p> : null}
        </form>
      ) : (
        <p className="mb-6 text-sm text-slate-600" data-testid="tokens-read-only">Only operators signed in to the console can create or revoke tokens.</p>
      )}
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
        <table className="w-full rounded-lg border border-slate-200 bg-white text-left text-sm" data-testid="tokens-table">
          <thead className="text-xs uppercase text-slate-500">
            <tr>
              <th className="p-2">Name</th>
              <th className="p-2">Role</th>
              <th className="p-2">Created</th>
              <th className="p-2">Last used</th>
              <th className="p-2">Status</th>
              <th className="p-2" />
            </tr>
          </thead>
          <tbody>
            {tokens.data.map((t) => (
              <tr key={t.id} data-testid="token-row" className="border-t border-slate-100">
                <td className="p-2">{t.name}</td>
                <td className="p-2">{t.role}</td>
                <td className="p-2">
                  <Time value={t.createdAt} /> <span className="text-xs text-slate-500">by {t.createdBy}</span>
                </td>
                <td className="p-2">
                  <Time value={t.lastUsedAt} fallback="never" />
                </td>
                <td className="p-2">{t.revokedAt ? <span className="text-red-700">revoked</span> : "active"}</td>
                <td className="p-2 text-right">
                  {canOperate && !t.revokedAt ? (
                    <Button size="sm" variant="danger" data-testid="token-revoke" disabled={revoke.isPending} onClick={() => window.confirm(`Revoke token “${t.name}”? Scripts using it stop working at once.`) && revoke.mutate(t.id)}>
                      Revoke
                    </Button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
