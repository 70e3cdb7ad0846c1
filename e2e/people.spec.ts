// People in a real browser: the environment's operator (an admin) adds a person on Settings →
// People, the person signs in in a second browser context, the admin disables them, and the second
// context's next request is refused (401) and its page goes to /login. Like auth.spec.ts it starts
// a second console on the same database with passwords configured.
import { expect, test } from "./fixtures";
import { signIn, useSecuredConsole } from "./secured-console";

test.describe.configure({ mode: "serial" });

const OPERATOR_PASSWORD = "e2e-people-operator-password";
const suffix = Date.now().toString(36);

const securedConsole = useSecuredConsole({ SLOTKEEPER_OPERATOR_PASSWORD: OPERATOR_PASSWORD });


test("an admin adds a person, the person signs in elsewhere, and disabling them ends that session at once", async ({ page, browser, sql }) => {
  const name = `e2e-person-${suffix}`;
  const password = "e2e-person-password-1";

  await signIn(page, securedConsole.url(), "operator", OPERATOR_PASSWORD, "admin");
  await page.goto(`${securedConsole.url()}/settings`);
  const section = page.getByTestId("people-section");
  await section.getByTestId("person-name").fill(name);
  await section.getByTestId("person-display-name").fill("E2E Person");
  await section.getByTestId("person-new-role").selectOption("operator");
  await section.getByTestId("person-password").fill(password);
  await section.getByTestId("person-create").click();
  const row = section.locator(`[data-testid="person-row"][data-name="${name}"]`);
  await expect(row.getByTestId("person-status")).toHaveText("active");
  await expect(row.getByTestId("person-role")).toHaveValue("operator");

  // The person, in a browser of their own.
  const other = await browser.newContext();
  try {
    const theirs = await other.newPage();
    await signIn(theirs, securedConsole.url(), name, password, "operator");
    expect((await theirs.request.get(`${securedConsole.url()}/api/me`)).status()).toBe(200);

    page.once("dialog", (d) => void d.accept());
    await row.getByTestId("person-disable").click();
    await expect(row.getByTestId("person-status")).toHaveText("disabled");

    // Their captured cookie is refused at once, and their page goes back to sign-in.
    expect((await theirs.request.get(`${securedConsole.url()}/api/me`)).status()).toBe(401);
    await theirs.goto(`${securedConsole.url()}/schedules`);
    await expect(theirs).toHaveURL(/\/login\?next=%2Fschedules/);
    // Signing in again is refused too.
    await theirs.getByTestId("login-user").selectOption({ label: "my own account…" });
    await theirs.getByTestId("login-name").fill(name);
    await theirs.getByTestId("login-password").fill(password);
    await theirs.getByTestId("login-submit").click();
    await expect(theirs.getByTestId("login-error")).toHaveText("wrong user or password");
  } finally {
    await other.close();
  }

  // The audit log names who did it.
  const audit = await sql.query("SELECT action, actor FROM audit_log WHERE target_type = 'person' AND target_id = $1 ORDER BY id", [name]);
  expect(audit.rows).toEqual([
    { action: "person.create", actor: "operator" },
    { action: "person.update", actor: "operator" },
  ]);
});
