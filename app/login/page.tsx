import { connection } from "next/server";
import { LoginForm } from "@/components/login-form";
import { PageHeader } from "@/components/ui/page-header";
import { getOidcSettings } from "@/lib/auth/oidc-settings";
import { getAccessSettings } from "@/lib/auth/settings";

export const metadata = { title: "Sign in · Slotkeeper" };

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ next?: string | string[] }> }) {
  await connection();
  const settings = getAccessSettings();
  const { next } = await searchParams;
  if (settings.mode !== "credentials") {
    return (
      <>
        <PageHeader title="Sign in" />
        <p data-testid="login-not-needed" className="max-w-xl text-sm text-slate-700">
          No credentials are configured: this console is open to this machine (loopback) only, and you are using it as the local
          operator. To sign in from other machines, set <code>SLOTKEEPER_OPERATOR_PASSWORD</code> (and optionally{" "}
          <code>SLOTKEEPER_VIEWER_PASSWORD</code>) and restart.
        </p>
      </>
    );
  }
  const oidc = getOidcSettings(true);
  return (
    <>
      <PageHeader title="Sign in" description="With your own account (given by an admin), or the installation's operator or viewer account." />
      {oidc ? (
        <p className="mb-4">
          <a
            href={`/api/auth/oidc/start?next=${encodeURIComponent(typeof next === "string" ? next : "/")}`}
            data-testid="login-oidc"
            className="inline-block rounded-md border border-slate-300 bg-white px-4 py-2 text-sm text-slate-900"
          >
            Sign in with {oidc.name}
          </a>
        </p>
      ) : null}
      <LoginForm next={typeof next === "string" ? next : undefined} hasViewer={!!settings.viewerPassword} />
    </>
  );
}
