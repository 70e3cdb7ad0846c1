// Single sign-on in a real browser: a real OpenID provider (oidc-provider) on loopback, a console
// of its own configured for it. A person clicks "Sign in with …", signs in at the provider's login
// page, and lands back signed in with the role their group maps to; a person whose group maps to
// viewer sees no operate buttons.
import type { Page } from "@playwright/test";
import { startTestProvider, type TestProvider } from "../lib/testing/oidc-provider";
import { expect, stackInfo, test } from "./fixtures";
import { freePort, startConsole } from "./stack";

test.describe.configure({ mode: "serial" });

const suffix = Date.now().toString(36);
let provider: TestProvider | undefined;
let console: Awaited<ReturnType<typeof startConsole>> | undefined;
let base = "";

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const port = await freePort(3400);
  base = `http://127.0.0.1:${port}`;
  provider = await startTestProvider({
    redirectUris: [`${base}/api/auth/oidc/callback`],
    users: [
      { sub: `ada-${suffix}`, username: `ada-${suffix}`, name: "Ada Ops", groups: ["staff", "sk-ops"] },
      { sub: `vic-${suffix}`, username: `vic-${suffix}`, name: "Vic Viewer", groups: ["sk-view"] },
    ],
  });
  console = await startConsole({
    databaseUrl: stackInfo().databaseUrl,
    port,
    env: {
      SLOTKEEPER_OPERATOR_PASSWORD: "e2e-oidc-operator-password",
      SLOTKEEPER_OIDC_ISSUER: provider.issuer,
      SLOTKEEPER_OIDC_CLIENT_ID: provider.clientId,
      SLOTKEEPER_OIDC_CLIENT_SECRET: provider.clientSecret,
      SLOTKEEPER_OIDC_NAME: "Test ID",
      SLOTKEEPER_OIDC_SCOPES: "openid profile groups",
      SLOTKEEPER_PUBLIC_URL: base,
      SLOTKEEPER_OIDC_ROLE_MAP: "sk-admins=admin,sk-ops=operator,sk-view=viewer",
    },
  });
});

test.afterAll(async () => {
  await console?.stop();
  await provider?.stop();
});

/** From the console's login page through the provider's login and consent pages, back signed in. */
async function signInWithProvider(page: Page, path: string, sub: string) {
  await page.goto(`${base}${path}`);
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByTestId("login-oidc").click();
  await expect(page).toHaveURL(new RegExp(`^${provider!.issuer}/interaction/`));
  await page.locator('input[name="login"]').fill(sub);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
  // The provider's consent page.
  await page.locator('button[type="submit"]').click();
  await expect(page).toHaveURL(`${base}${path}`);
}

test("a person signs in at the provider and lands back as the operator their group maps to", async ({ page, sql }) => {
  await page.goto(`${base}/login`);
  await expect(page.getByTestId("login-oidc")).toHaveText("Sign in with Test ID");
  await signInWithProvider(page, "/schedules", `ada-${suffix}`);
  await expect(page.getByTestId("session-user")).toHaveText(`ada-${suffix}`);
  await expect(page.getByTestId("session-role")).toHaveText("operator");
  const person = await sql.query("SELECT role, oidc_issuer FROM people WHERE oidc_subject = $1", [`ada-${suffix}`]);
  expect(person.rows).toEqual([{ role: "operator", oidc_issuer: provider!.issuer }]);
  const audit = await sql.query("SELECT count(*)::int AS n FROM audit_log WHERE action = 'auth.login' AND actor = $1", [`ada-${suffix}`]);
  expect(audit.rows[0].n).toBe(1);
});

test("a person whose group maps to viewer sees no operate buttons", async ({ page, request }) => {
  const name = `e2e-oidc-${suffix}`;
  expect((await request.post("/api/schedules", { data: { name, handler: "noop", everySeconds: 86_400 } })).status()).toBe(201);
  await signInWithProvider(page, `/schedules/${name}`, `vic-${suffix}`);
  await expect(page.getByTestId("session-user")).toHaveText(`vic-${suffix}`);
  await expect(page.getByTestId("session-role")).toHaveText("viewer");
  await expect(page.getByRole("heading", { name })).toBeVisible();
  await expect(page.getByTestId("run-now")).toHaveCount(0);
  await expect(page.getByTestId("pause")).toHaveCount(0);
});
