// A real cross-site page in Chromium: another origin (http://localhost:<its port>, another site
// than the console's 127.0.0.1) tries to pause a schedule and to create one with the ways a page
// can send a request without the console's consent — form posts (text/plain and urlencoded), fetch
// with mode no-cors, and the same from a sandboxed iframe (Origin: null). In both access modes,
// with the browser holding the console's trust (loopback, or a signed-in session), every attempt
// is answered with a refusal and the database shows nothing changed.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import type pg from "pg";
import { expect, stackInfo, test } from "./fixtures";
import { startConsole } from "./stack";

test.describe.configure({ mode: "serial" });

const suffix = Date.now().toString(36);
const PASSWORD = "cross-site-operator-password";
let attacker: http.Server;
let attackerOrigin = "";
let target = "";
let victim = "";

/** The attacker's pages, all aimed at `target` (the console under attack). */
function pages(): Record<string, string> {
  const pause = `${target}/api/schedules/${victim}/pause`;
  const create = `${target}/api/schedules`;
  const evil = `evil-${suffix}`;
  const jsonish = `{"name":"${evil}","handler":"noop","everySeconds":60,"x":"`;
  const form = (action: string, enctype: string, fields: string) => `<form method="POST" action="${action}" enctype="${enctype}">${fields}</form>`;
  const autoSubmit = "<script>document.forms[0].submit()</script>";
  const fetches = `<script>
    const opts = (body) => ({ method: "POST", mode: "no-cors", credentials: "include", body, headers: { "content-type": "text/plain" } });
    Promise.allSettled([fetch(${JSON.stringify(pause)}, opts("{}")), fetch(${JSON.stringify(create)}, opts(${JSON.stringify(jsonish + '"}')})),
      fetch(${JSON.stringify(pause)}, { method: "POST", mode: "no-cors", credentials: "include" })]).then(() => {
        document.title = "sent";
        parent.postMessage("sent", "*");
      });
  </script>`;
  // A sandboxed frame without allow-same-origin has an opaque origin: its requests say `Origin: null`.
  const inFrame = (inner: string) => `<script>addEventListener("message", (e) => { if (e.data === "sent") document.title = "sent"; });</script><iframe sandbox="allow-scripts allow-forms" src="${inner}"></iframe>`;
  return {
    "/form-text-pause": form(pause, "text/plain", `<input name='{"a":"' value='"}'>`) + autoSubmit,
    "/form-text-create": form(create, "text/plain", `<input name='${jsonish}' value='"}'>`) + autoSubmit,
    "/form-urlencoded-pause": form(pause, "application/x-www-form-urlencoded", `<input name="a" value="1">`) + autoSubmit,
    "/form-urlencoded-create": form(create, "application/x-www-form-urlencoded", `<input name="name" value="${evil}"><input name="handler" value="noop">`) + autoSubmit,
    "/fetch-no-cors": fetches,
    "/inner-form": form(pause, "text/plain", `<input name='{"a":"' value='"}'>`) + autoSubmit,
    "/inner-fetch": fetches,
    "/iframe-form": inFrame("/inner-form"),
    "/iframe-fetch": inFrame("/inner-fetch"),
  };
}

test.beforeAll(async () => {
  attacker = http.createServer((req, res) => {
    const html = pages()[req.url ?? ""];
    res.writeHead(html ? 200 : 404, { "content-type": "text/html" }).end(html ? `<!doctype html><title>attack</title>${html}` : "");
  });
  await new Promise<void>((r) => attacker.listen(0, "127.0.0.1", r));
  attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise<void>((r) => attacker.close(() => r()));
});

async function state(sql: pg.Pool) {
  const s = await sql.query<{ enabled: boolean }>("SELECT enabled FROM schedules WHERE name = $1", [victim]);
  const evil = await sql.query("SELECT 1 FROM schedules WHERE name = $1", [`evil-${suffix}`]);
  const audit = await sql.query<{ n: string }>("SELECT count(*) AS n FROM audit_log");
  return { enabled: s.rows[0]?.enabled, evil: evil.rowCount, audit: Number(audit.rows[0].n) };
}

/**
 * Visit every attack page; return what became of every request they sent the console: its status,
 * or, for a framed navigation whose answer forbids framing (frame-ancestors 'none'), Chromium's
 * error — the page never sees that answer at all.
 */
async function attack(page: Page): Promise<{ url: string; status: number | string }[]> {
  const answers: { url: string; status: number | string }[] = [];
  const answered = new WeakSet<object>();
  page.on("response", (r) => {
    if (!r.url().startsWith(target) || r.request().method() !== "POST") return;
    answered.add(r.request());
    answers.push({ url: r.url(), status: r.status() });
  });
  // A no-cors fetch whose (opaque) answer arrived is reported aborted afterwards: that one has its status already.
  page.on("requestfailed", (r) => {
    if (r.url().startsWith(target) && r.method() === "POST" && !answered.has(r)) answers.push({ url: r.url(), status: r.failure()?.errorText ?? "failed" });
  });
  for (const path of Object.keys(pages()).filter((p) => !p.startsWith("/inner-"))) {
    const before = answers.length;
    await page.goto(`${attackerOrigin}${path}`);
    // Each page's requests must have settled before the next navigation, which would abort them.
    if (path.includes("fetch")) await expect(page, path).toHaveTitle("sent", { timeout: 15_000 });
    const expected = path.includes("fetch") ? 3 : 1;
    await expect.poll(() => answers.length - before, { message: path, timeout: 15_000 }).toBeGreaterThanOrEqual(expected);
  }
  return answers;
}

async function assertRefused(page: Page, sql: pg.Pool) {
  const before = await state(sql);
  expect(before).toMatchObject({ enabled: true, evil: 0 });
  const answers = await attack(page);
  expect(answers.length).toBeGreaterThanOrEqual(11);
  for (const a of answers) expect([400, 401, 403, "net::ERR_BLOCKED_BY_RESPONSE"], `${a.url} answered ${a.status}`).toContain(a.status);
  expect(await state(sql)).toEqual(before);
}

test("loopback-only console: every cross-site attempt is refused and nothing changes", async ({ page, request, sql }) => {
  target = stackInfo().baseURL;
  victim = `xsite-${suffix}`;
  expect((await request.post(`${target}/api/schedules`, { data: { name: victim, handler: "noop", everySeconds: 3600 } })).status()).toBe(201);
  await assertRefused(page, sql);
});

test("signed-in console: every cross-site attempt is refused and nothing changes", async ({ page, sql }) => {
  test.setTimeout(150_000);
  const secured = await startConsole({ databaseUrl: stackInfo().databaseUrl, env: { SLOTKEEPER_OPERATOR_PASSWORD: PASSWORD } });
  try {
    target = secured.url;
    victim = `xsite-signed-${suffix}`;
    await page.goto(`${target}/login`);
    await page.getByTestId("login-password").fill(PASSWORD);
    await page.getByTestId("login-submit").click();
    await expect(page.getByTestId("session-role")).toHaveText("admin");
    const made = await page.request.post(`${target}/api/schedules`, { data: { name: victim, handler: "noop", everySeconds: 3600 }, headers: { origin: target } });
    expect(made.status()).toBe(201);
    await assertRefused(page, sql);
    // The session itself still works: the refusals were about the requests, not the browser.
    expect((await page.request.get(`${target}/api/me`)).status()).toBe(200);
  } finally {
    await secured.stop();
  }
});
