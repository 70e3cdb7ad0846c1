// Access control in a real browser. The global stack runs with no credentials (loopback-only);
// these tests also start a SECOND console on the same database with passwords configured, so the
// other specs keep their open loopback console.
import type { APIRequestContext, Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { signIn, useSecuredConsole } from "./secured-console";

test.describe.configure({ mode: "serial" });

const OPERATOR_PASSWORD = "e2e-operator-password";
const VIEWER_PASSWORD = "e2e-viewer-password";
const HOSTILE = "<img src=x onerror=alert(1)>";
const suffix = Date.now().toString(36);

const securedConsole = useSecuredConsole({ SLOTKEEPER_OPERATOR_PASSWORD: OPERATOR_PASSWORD, SLOTKEEPER_VIEWER_PASSWORD: VIEWER_PASSWORD });

/** Fail the test if any JavaScript dialog opens (an injected onerror=alert would). */
function forbidDialogs(page: Page) {
  page.on("dialog", async (d) => {
    await d.dismiss();
    throw new Error(`a dialog opened: ${d.message()}`);
  });
}

async function post(request: APIRequestContext, url: string, data: unknown, headers: Record<string, string> = {}) {
  return request.post(url, { data, headers });
}

test("loopback-only console says so in a banner; the secured one does not", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("access-banner")).toContainText("Loopback only");
  await page.goto(`${securedConsole.url()}/login`);
  await expect(page.getByTestId("login-form")).toBeVisible();
  await expect(page.getByTestId("access-banner")).toHaveCount(0);
});

test("an operator signs in, pauses a schedule and finds the audit entry", async ({ page }) => {
  forbidDialogs(page);
  const name = `e2e-auth-${suffix}`;
  await page.goto(`${securedConsole.url()}/`);
  await page.getByTestId("login-password").fill("wrong-password");
  await page.getByTestId("login-submit").click();
  await expect(page.getByTestId("login-error")).toHaveText("wrong user or password");
  await signIn(page, securedConsole.url(), "operator", OPERATOR_PASSWORD, "admin");

  // The session cookie is httpOnly and SameSite=Strict.
  const cookie = (await page.context().cookies()).find((c) => c.name === "sk_session");
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });
  expect(cookie!.expires).toBeGreaterThan(Date.now() / 1000);

  // Signed-in API calls need the console's Origin: without it (or from elsewhere) they are refused.
  const body = { name, handler: "noop", everySeconds: 3600, description: HOSTILE };
  expect((await post(page.request, `${securedConsole.url()}/api/schedules`, body)).status()).toBe(403);
  expect((await post(page.request, `${securedConsole.url()}/api/schedules`, body, { origin: "http://evil.example" })).status()).toBe(403);
  expect((await post(page.request, `${securedConsole.url()}/api/schedules`, body, { origin: securedConsole.url() })).status()).toBe(201);

  await page.goto(`${securedConsole.url()}/schedules/${name}`);
  await page.getByTestId("pause").click();
  await expect(page.getByTestId("resume")).toBeVisible();
  await expect(page.getByTestId("schedule-audit").getByTestId("audit-row").first()).toHaveAttribute("data-action", "schedule.pause");

  await page.getByTestId("nav-audit").click();
  await page.getByTestId("audit-filter-schedule").fill(name);
  await page.getByTestId("audit-apply").click();
  const pause = page.getByTestId("audit-row").filter({ has: page.getByTestId("audit-action").getByText("schedule.pause", { exact: true }) });
  await expect(pause).toHaveCount(1);
  await expect(pause.getByTestId("audit-actor")).toContainText("operator");
  await expect(pause.getByTestId("audit-before")).toContainText('"enabled": true');
  await expect(pause.getByTestId("audit-after")).toContainText('"enabled": false');
  await page.screenshot({ path: "e2e/output/screenshots/audit.png", fullPage: true });

  await page.getByTestId("sign-out").click();
  await expect(page).toHaveURL(/\/login/);
  expect((await page.request.get(`${securedConsole.url()}/api/me`)).status()).toBe(401);
});

test("a viewer sees no re-queue button, and the API refuses the re-queue", async ({ page, request }) => {
  forbidDialogs(page);
  // Arrange a dead run through the open loopback console; its error text is hostile markup.
  const name = `e2e-viewer-${suffix}`;
  expect((await request.post("/api/schedules", { data: { name, handler: "fail", payload: { nonRetryable: true, message: HOSTILE }, everySeconds: 86_400, retry: { maxAttempts: 1, baseSeconds: 1, capSeconds: 1 } } })).status()).toBe(201);
  expect((await request.post(`/api/schedules/${name}/run-now`, { data: {} })).ok()).toBeTruthy();
  let runId = 0;
  await expect(async () => {
    const runs = (await (await request.get(`/api/runs?state=dead&schedule=${name}`)).json()) as { runs: { id: number }[] };
    expect(runs.runs.length).toBe(1);
    runId = runs.runs[0].id;
  }).toPass({ timeout: 30_000 });

  await signIn(page, securedConsole.url(), "viewer", VIEWER_PASSWORD, "viewer");
  await page.goto(`${securedConsole.url()}/runs?state=dead`);
  const row = page.getByTestId("runs-table").locator('[data-testid="run-row"]').filter({ hasText: name });
  await expect(row).toBeVisible();
  await expect(page.getByTestId("requeue-run")).toHaveCount(0);
  await expect(page.getByTestId("requeue-selected")).toHaveCount(0);
  await page.goto(`${securedConsole.url()}/runs/${runId}`);
  await expect(page.getByTestId("attempt-error")).toContainText(HOSTILE);
  await expect(page.getByTestId("requeue-run")).toHaveCount(0);
  await page.goto(`${securedConsole.url()}/schedules/${name}`);
  await expect(page.getByTestId("run-now")).toHaveCount(0);
  await expect(page.getByTestId("pause")).toHaveCount(0);

  const refused = await page.request.post(`${securedConsole.url()}/api/runs/${runId}/requeue`, { data: {}, headers: { origin: securedConsole.url() } });
  expect(refused.status()).toBe(403);
  expect(((await refused.json()) as { error: { message: string } }).error.message).toContain("operator");
});

test("hostile strings render as text: a markup name is refused, markup elsewhere is shown literally", async ({ page, request }) => {
  forbidDialogs(page);
  const csp: string[] = [];
  page.on("console", (m) => m.text().includes("Content Security Policy") && csp.push(m.text()));
  // Names are limited to letters, digits, spaces and . _ : - — markup is a 400 naming the field.
  const refused = await request.post("/api/schedules", { data: { name: HOSTILE, handler: "noop", everySeconds: 60 } });
  expect(refused.status()).toBe(400);
  expect(((await refused.json()) as { error: { field: string } }).error.field).toBe("name");

  const name = `e2e-hostile-${suffix}`;
  expect((await request.post("/api/schedules", { data: { name, handler: "noop", everySeconds: 3600, description: HOSTILE, payload: { note: HOSTILE } } })).status()).toBe(201);
  await page.goto(`/schedules/${name}`);
  await expect(page.getByText(HOSTILE, { exact: true }).first()).toBeVisible();
  await expect(page.locator("img[src=x]")).toHaveCount(0);
  await page.goto(`/audit`);
  await expect(page.getByTestId("audit-after").filter({ hasText: HOSTILE }).first()).toBeVisible();
  await expect(page.locator("img[src=x]")).toHaveCount(0);
  expect(csp).toEqual([]);
});
