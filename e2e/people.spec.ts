// People in a real browser: the environment's operator (an admin) adds a person on Settings →
// People, the person signs in in a second browser context, the admin disables them, and the second
// context's next request is refused (401) and its page goes to /login. A person's "Sign out
// everywhere" and their own password change end their other sessions the same way, a cookie copied
// into another context included. Like auth.spec.ts it starts a second console on the same database
// with passwords configured.
import type { APIRequestContext, Browser, BrowserContext, Page } from "@playwright/test";
import type pg from "pg";
import { expect, test } from "./fixtures";
import { signIn, useSecuredConsole } from "./secured-console";

// Each test signs in two or three browsers with scrypt-hashed passwords: on a busy 2-core machine that takes
// longer than the suite's default of 60 s allows.
test.describe.configure({ mode: "serial", timeout: 120_000 });

const OPERATOR_PASSWORD = "e2e-people-operator-password";
const suffix = Date.now().toString(36);

const securedConsole = useSecuredConsole({ SLOTKEEPER_OPERATOR_PASSWORD: OPERATOR_PASSWORD });

/** An operator person, added through the open loopback console's API (the same database). */
async function addPerson(request: APIRequestContext, name: string, password: string) {
  const res = await request.post("/api/people", { data: { name, role: "operator", password } });
  expect(res.status(), await res.text()).toBe(201);
}

/** A new browser context holding the cookies `from` holds now: a captured session cookie. */
async function copyOfCookies(browser: Browser, from: BrowserContext): Promise<BrowserContext> {
  const copy = await browser.newContext();
  await copy.addCookies(await from.cookies());
  return copy;
}

/** GET /api/me on the secured console from `ctx`: 200 while its session lives, 401 once it ended. */
async function meStatus(ctx: BrowserContext): Promise<number> {
  return (await ctx.request.get(`${securedConsole.url()}/api/me`)).status();
}

/**
 * Open `path` on the secured console in a context whose session has ended: it lands on the sign-in
 * page with `next` naming it. The page's own polling may meet its 401 first and send it to /login
 * itself, aborting this navigation (net::ERR_ABORTED), so the navigation is tried again until it lands.
 */
async function toLoginFrom(page: Page, path: string): Promise<void> {
  await expect(async () => {
    await page.goto(`${securedConsole.url()}${path}`);
    await expect(page).toHaveURL(new RegExp(`/login\\?next=${encodeURIComponent(path)}`), { timeout: 2_000 });
  }).toPass({ timeout: 20_000 });
}

/** How many sessions the database holds for `account`. */
async function sessionCount(sql: pg.Pool, account: string): Promise<number> {
  return (await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM sessions WHERE account = $1", [account])).rows[0].n;
}

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
    await toLoginFrom(theirs, "/schedules");
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

test("the sign-in form takes no input before the page's script runs, so a person's own account picked early is not lost", async ({ page, request }) => {
  const name = `e2e-early-${suffix}`;
  const password = "e2e-early-password-1";
  await addPerson(request, name, password);
  // Hold the console's scripts: the page is the server's HTML, not hydrated yet.
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  await page.route(/\/_next\/static\/chunks\/.*\.js(\?.*)?$/, async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(`${securedConsole.url()}/login`, { waitUntil: "domcontentloaded" });
  await expect(page.getByTestId("login-form")).toBeVisible();
  for (const field of ["login-user", "login-password", "login-submit"]) await expect(page.getByTestId(field), field).toBeDisabled();
  release();
  await page.getByTestId("login-user").selectOption({ label: "my own account…" });
  await page.getByTestId("login-name").fill(name);
  await page.getByTestId("login-password").fill(password);
  await page.getByTestId("login-submit").click();
  await expect(page.getByTestId("session-user")).toHaveText(name);
  await page.unrouteAll({ behavior: "ignoreErrors" });
});

test("sign out everywhere ends every session of that person at once, a captured cookie included", async ({ page, browser, request, sql }) => {
  const name = `e2e-everywhere-${suffix}`;
  const password = "e2e-everywhere-password-1";
  await addPerson(request, name, password);
  await signIn(page, securedConsole.url(), name, password, "operator");
  const elsewhere = await browser.newContext();
  const captured = await copyOfCookies(browser, page.context());
  try {
    const theirs = await elsewhere.newPage();
    await signIn(theirs, securedConsole.url(), name, password, "operator");
    expect([await meStatus(elsewhere), await meStatus(captured)]).toEqual([200, 200]);
    expect(await sessionCount(sql, name)).toBe(2);

    await page.getByTestId("sign-out-everywhere").click();
    await expect(page).toHaveURL(/\/login/);
    await expect(page.getByTestId("login-form")).toBeVisible();

    // Every session of theirs is gone: the other browser and the copied cookie are refused.
    expect([await meStatus(page.context()), await meStatus(elsewhere), await meStatus(captured)]).toEqual([401, 401, 401]);
    await toLoginFrom(theirs, "/schedules");
    expect(await sessionCount(sql, name)).toBe(0);
  } finally {
    await elsewhere.close();
    await captured.close();
  }
  const audit = await sql.query("SELECT actor, after->'signedOut' AS ended FROM audit_log WHERE action = 'auth.logout_everywhere' AND actor = $1", [name]);
  expect(audit.rows).toEqual([{ actor: name, ended: 2 }]);
});

test("a person who changes their own password keeps this session and ends every other, a captured cookie included", async ({ page, browser, request, sql }) => {
  const name = `e2e-own-password-${suffix}`;
  const oldPassword = "e2e-own-password-old-1";
  const newPassword = "e2e-own-password-new-1";
  await addPerson(request, name, oldPassword);
  const hashOf = async () => (await sql.query<{ h: string }>("SELECT password_hash AS h FROM people WHERE name = $1", [name])).rows[0].h;
  const oldHash = await hashOf();
  await signIn(page, securedConsole.url(), name, oldPassword, "operator");
  const elsewhere = await browser.newContext();
  const captured = await copyOfCookies(browser, page.context());
  try {
    const theirs = await elsewhere.newPage();
    await signIn(theirs, securedConsole.url(), name, oldPassword, "operator");

    await page.goto(`${securedConsole.url()}/settings`);
    const form = page.getByTestId("own-password-form");
    await form.getByTestId("own-password-current").fill(oldPassword);
    await form.getByTestId("own-password-new").fill(newPassword);
    await form.getByTestId("own-password-save").click();
    await expect(form.getByTestId("own-password-done")).toHaveText("Password changed.");
    expect(await hashOf()).not.toBe(oldHash);

    // This browser is still signed in (on a fresh session); the other one and the copied cookie are not.
    expect([await meStatus(page.context()), await meStatus(elsewhere), await meStatus(captured)]).toEqual([200, 401, 401]);
    await page.reload();
    await expect(page.getByTestId("session-user")).toHaveText(name);
    expect(await sessionCount(sql, name)).toBe(1);
    await toLoginFrom(theirs, "/schedules");

    // The old password no longer signs in; the new one does.
    await theirs.getByTestId("login-user").selectOption({ label: "my own account…" });
    await theirs.getByTestId("login-name").fill(name);
    await theirs.getByTestId("login-password").fill(oldPassword);
    await theirs.getByTestId("login-submit").click();
    await expect(theirs.getByTestId("login-error")).toHaveText("wrong user or password");
    await signIn(theirs, securedConsole.url(), name, newPassword, "operator");
    expect(await sessionCount(sql, name)).toBe(2);
  } finally {
    await elsewhere.close();
    await captured.close();
  }
  const audit = await sql.query("SELECT actor, after FROM audit_log WHERE action = 'person.password' AND target_id = $1", [name]);
  expect(audit.rows).toEqual([{ actor: name, after: { changed: "password", signedOut: 2 } }]);
});
