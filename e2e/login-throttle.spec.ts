// Sign-in throttling shared by two web processes: two consoles with passwords configured on the
// same database take turns answering one guesser (lib/auth/throttle.ts keeps the counts in
// login_failures). The database clock is frozen, then moved, so the delays are exact and the test
// never sleeps. The oracle is the statuses the client sees: five 401s wherever they land, then a
// 429 from either console, and the right password once the window has passed.
import type { APIRequestContext } from "@playwright/test";
import { expect, test } from "./fixtures";
import { useSecuredConsole } from "./secured-console";

test.describe.configure({ mode: "serial" });

const OPERATOR_PASSWORD = "e2e-throttle-operator-password";
const env = { SLOTKEEPER_OPERATOR_PASSWORD: OPERATOR_PASSWORD };
const first = useSecuredConsole(env);
const second = useSecuredConsole(env);

async function tryLogin(request: APIRequestContext, base: string, password: string) {
  const res = await request.post(`${base}/api/auth/login`, { data: { user: "operator", password }, headers: { origin: base } });
  return { status: res.status(), retryAfter: res.headers()["retry-after"], body: await res.text() };
}

test("failed sign-ins on one console count on the other, and the right password gets in once the window has passed", async ({ request, sql }) => {
  const consoles = [first.url(), second.url()];
  expect(consoles[0]).not.toBe(consoles[1]);
  const { rows } = await sql.query<{ now: Date }>("SELECT sk_now() AS now");
  await sql.query("DELETE FROM login_failures");
  await sql.query("UPDATE sk_clock SET frozen_at = $1, shift = interval '0' WHERE id = 1", [rows[0].now]);
  try {
    // Ten wrong guesses, alternating between the two processes, with the clock standing still.
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await tryLogin(request, consoles[i % 2], `wrong-${i}`);
      statuses.push(r.status);
      if (r.status === 429) {
        expect(r.retryAfter, r.body).toBe("1");
        expect(JSON.parse(r.body).error.code).toBe("rate_limited");
      }
    }
    // Five free failures in total (not five per process), then every further try is refused.
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    // The right password waits too while this address is throttled, on either console.
    for (const base of consoles) expect((await tryLogin(request, base, OPERATOR_PASSWORD)).status).toBe(429);
    // Refused tries are not counted: the database holds five failures for the address and the account.
    const counts = await sql.query<{ kind: string; failures: number }>("SELECT kind, failures FROM login_failures WHERE kind = 'account' AND subject = 'operator' OR kind = 'address' ORDER BY kind");
    expect(counts.rows).toEqual([
      { kind: "account", failures: 5 },
      { kind: "address", failures: 5 },
    ]);

    // One second on, one more guess is allowed (the sixth failure), and the next waits two seconds.
    await sql.query("UPDATE sk_clock SET frozen_at = frozen_at + interval '1 second' WHERE id = 1");
    expect((await tryLogin(request, consoles[1], "wrong-again")).status).toBe(401);
    const doubled = await tryLogin(request, consoles[0], "wrong-again");
    expect(doubled.status).toBe(429);
    expect(doubled.retryAfter).toBe("2");

    // Past the 15-minute window: the right password signs in, on the console that did not count the last failure.
    await sql.query("UPDATE sk_clock SET frozen_at = frozen_at + interval '15 minutes 1 second' WHERE id = 1");
    const ok = await request.post(`${consoles[0]}/api/auth/login`, { data: { user: "operator", password: OPERATOR_PASSWORD }, headers: { origin: consoles[0] } });
    expect(ok.status(), await ok.text()).toBe(200);
    expect(ok.headers()["set-cookie"]).toMatch(/sk_session=/);
    // A success forgets the address's count.
    expect((await sql.query("SELECT 1 FROM login_failures WHERE kind = 'address'")).rowCount).toBe(0);
  } finally {
    await sql.query("UPDATE sk_clock SET frozen_at = NULL, shift = interval '0' WHERE id = 1");
    await sql.query("DELETE FROM login_failures");
  }
});
