// A second console on the e2e database with passwords configured, for the specs about signing in
// (auth.spec.ts, people.spec.ts); the global stack's console stays loopback-only for the others.
import type { Page } from "@playwright/test";
import { expect, stackInfo, test, untilHydrated } from "./fixtures";
import { startConsole, type StackEnv } from "./stack";

/** Start the console before the file's tests and stop it after; `url()` is its address once started. */
export function useSecuredConsole(env: StackEnv): { url: () => string } {
  let console: Awaited<ReturnType<typeof startConsole>> | undefined;
  test.beforeAll(async () => {
    test.setTimeout(120_000);
    console = await startConsole({ databaseUrl: stackInfo().databaseUrl, env });
  });
  test.afterAll(async () => {
    await console?.stop();
  });
  return {
    url: () => {
      if (!console) throw new Error("the secured console has not started");
      return console.url;
    },
  };
}

/**
 * Sign in on the console at `base` from its login page: the environment's `operator` or `viewer`
 * account by the picker, anyone else by name; then the header shows who and which role.
 */
export async function signIn(page: Page, base: string, user: string, password: string, role: string) {
  await page.goto(`${base}/`);
  await expect(page).toHaveURL(/\/login\?next=/);
  await untilHydrated(page); // a page of another browser context than the fixture's
  if (user === "operator" || user === "viewer") {
    await page.getByTestId("login-user").selectOption(user);
  } else {
    await page.getByTestId("login-user").selectOption({ label: "my own account…" });
    await page.getByTestId("login-name").fill(user);
  }
  await page.getByTestId("login-password").fill(password);
  await page.getByTestId("login-submit").click();
  await expect(page.getByTestId("session-user")).toHaveText(user);
  await expect(page.getByTestId("session-role")).toHaveText(role);
}
