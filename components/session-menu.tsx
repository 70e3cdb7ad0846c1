"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { fetchJson } from "@/lib/client/api";
import { useMe } from "@/lib/client/me";

/** Who is signed in, their role, and (with credentials configured) a sign-out button. */
export function SessionMenu() {
  const me = useMe();
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState(false);
  if (!me.data) return null;
  const { actor, access } = me.data;
  const signOut = async (everywhere: boolean) => {
    setBusy(true);
    try {
      await fetchJson(`/api/auth/logout${everywhere ? "?everywhere=1" : ""}`, { method: "POST" });
    } finally {
      queryClient.clear();
      // A full load: nothing of the signed-out user's state may survive in memory.
      // eslint-disable-next-line @next/next/no-location-assign-relative-destination
      window.location.assign("/login");
    }
  };
  return (
    <div data-testid="session-menu" className="mt-8 border-t border-slate-200 pt-4 text-xs text-slate-600">
      <p>
        <span data-testid="session-user" className="font-medium text-slate-800">{actor.name}</span>{" "}
        <span data-testid="session-role" className="rounded bg-slate-100 px-1.5 py-0.5">{actor.role}</span>
      </p>
      {access === "credentials" && actor.kind === "user" ? (
        <div className="mt-2 flex flex-wrap gap-2">
          <button type="button" data-testid="sign-out" disabled={busy} onClick={() => signOut(false)} className="rounded-md border border-slate-300 px-2 py-1 hover:bg-slate-100 disabled:opacity-50">
            Sign out
          </button>
          <button type="button" data-testid="sign-out-everywhere" disabled={busy} onClick={() => signOut(true)} title="End every session of this account, on every device" className="rounded-md border border-slate-300 px-2 py-1 hover:bg-slate-100 disabled:opacity-50">
            Sign out everywhere
          </button>
        </div>
      ) : null}
    </div>
  );
}
