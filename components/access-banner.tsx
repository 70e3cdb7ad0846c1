import { connection } from "next/server";
import { getAccessSettings } from "@/lib/auth/settings";

/**
 * Says, on every page, that the console is open to this machine only. A server component that
 * waits for the request: it reads the settings at request time (not at build time), and it makes
 * every page dynamic, which the CSP nonce from proxy.ts needs.
 */
export async function AccessBanner() {
  await connection();
  if (getAccessSettings().mode !== "loopback-only") return null;
  return (
    <div role="status" data-testid="access-banner" className="border-b border-amber-200 bg-amber-50 px-8 py-2 text-sm text-amber-900">
      <strong className="font-medium">Loopback only.</strong> No credentials are configured, so this console and its API answer
      only requests from this machine. Set <code>SLOTKEEPER_OPERATOR_PASSWORD</code> (and optionally{" "}
      <code>SLOTKEEPER_VIEWER_PASSWORD</code>) to allow other clients.
    </div>
  );
}
