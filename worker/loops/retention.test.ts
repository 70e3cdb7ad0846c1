import { beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../lib/log";
import { deleteExpiredOidcLogins } from "../../lib/auth/oidc-logins";
import { deleteStaleLoginFailures } from "../../lib/auth/throttle";
import { advanceClock } from "../../lib/testing/clock";
import { setupTestDatabase } from "../../lib/testing/db";
import { makeRun, makeSchedule } from "../../lib/testing/factories";
import { waitUntil } from "../../lib/testing/wait";
import { startRetentionLoop } from "./retention";

const log = createLogger("test", "silent");
const NOW = new Date("2030-06-01T12:00:00Z");
const policy = { retentionDays: 7, maxRunsPerSchedule: 1000 };

const t = setupTestDatabase({ clock: NOW });

let scheduleId: number;
beforeEach(async () => {
  scheduleId = (await makeSchedule(t.db, { everySeconds: 3600 })).id;
  // Three finished runs a month old: past the 7-day retention.
  for (let d = 30; d < 33; d++) {
    const at = new Date(NOW.getTime() - d * 86_400_000);
    await makeRun(t.db, { scheduleId, scheduledFor: at, dueAt: at, runAfter: at, state: "done", attempts: 1, finishedAt: at });
  }
});

const stored = async () => Number((await t.pool.query(`SELECT count(*) AS n FROM runs WHERE schedule_id = $1`, [scheduleId])).rows[0].n);

const until = (what: string, ok: () => Promise<boolean>) => waitUntil(ok, 10_000, what, 20);

describe("retention loop", () => {
  it("holds its deletes back while the worker has a backlog to claim, and sweeps once it is through", async () => {
    let backlog = true;
    let asked = 0;
    const loop = startRetentionLoop({
      db: t.db,
      log,
      policy,
      isSweeper: () => true,
      busy: () => {
        asked++;
        return backlog;
      },
      pauseMs: 10,
    });
    try {
      await until("the sweep to consult the backlog", async () => asked >= 5);
      expect(await stored()).toBe(3);
      backlog = false;
      await until("the expired runs to go", async () => (await stored()) === 0);
    } finally {
      await loop.stop();
    }
  });

  it("still sweeps under a backlog that never ends, one step per maxYieldMs", async () => {
    const loop = startRetentionLoop({ db: t.db, log, policy, isSweeper: () => true, busy: () => true, pauseMs: 10, maxYieldMs: 100 });
    try {
      await until("the expired runs to go", async () => (await stored()) === 0);
    } finally {
      await loop.stop();
    }
  });
});

describe("retention loop and console sessions", () => {
  it("deletes sessions that expired by the database clock and keeps live ones", async () => {
    await t.pool.query(
      `INSERT INTO sessions (id_hash, account, role, created_at, expires_at, last_seen_at) VALUES
         ('expired', 'operator', 'admin', sk_now() - interval '13 hours', sk_now() - interval '1 hour', sk_now() - interval '2 hours'),
         ('live', 'operator', 'admin', sk_now(), sk_now() + interval '12 hours', sk_now())`,
    );
    const loop = startRetentionLoop({ db: t.db, log, policy, isSweeper: () => true, pauseMs: 10 });
    try {
      await until("the expired session to go", async () => (await t.pool.query(`SELECT 1 FROM sessions WHERE id_hash = 'expired'`)).rowCount === 0);
      expect((await t.pool.query(`SELECT id_hash FROM sessions`)).rows).toEqual([{ id_hash: "live" }]);
    } finally {
      await loop.stop();
    }
  });
});

describe("retention loop and sign-in rows", () => {
  it("deletes OpenID Connect sign-ins and failed-sign-in counts once the database clock passes their end, and keeps the rest", async () => {
    // Started at NOW, each lasting 10 minutes (lib/auth/oidc.ts); one started 5 minutes later.
    await t.pool.query(
      `INSERT INTO oidc_logins (state_hash, nonce, code_verifier, next_path, created_at, expires_at) VALUES
         ('early', 'n1', 'v1', '/', sk_now(), sk_now() + interval '10 minutes'),
         ('late', 'n2', 'v2', '/', sk_now() + interval '5 minutes', sk_now() + interval '15 minutes')`,
    );
    await t.pool.query(`INSERT INTO login_failures (kind, subject, failures, last_failure_at) VALUES ('address', '192.0.2.1', 3, sk_now()), ('account', 'ada', 3, sk_now())`);
    // Before either expires, the passes the sweep makes delete nothing.
    expect(await deleteExpiredOidcLogins(t.db)).toBe(0);
    expect(await deleteStaleLoginFailures(t.db)).toBe(0);
    const loop = startRetentionLoop({ db: t.db, log, policy, isSweeper: () => true, pauseMs: 10, intervalMs: 50 });
    const states = async () => (await t.pool.query<{ state_hash: string }>(`SELECT state_hash FROM oidc_logins ORDER BY 1`)).rows.map((r) => r.state_hash);
    const failures = async () => Number((await t.pool.query(`SELECT count(*) AS n FROM login_failures`)).rows[0].n);
    try {
      expect(await states()).toEqual(["early", "late"]);
      // 10 minutes on: the first sign-in has expired, the second has not.
      await advanceClock(t.pool, 10 * 60_000);
      await until("the expired sign-in to go", async () => (await states()).length === 1);
      expect(await states()).toEqual(["late"]);
      expect(await failures()).toBe(2);
      // 15 minutes and a second on: the second sign-in and the counts (15-minute window) have gone too.
      await advanceClock(t.pool, 5 * 60_000 + 1_000);
      await until("the rest to go", async () => (await states()).length === 0 && (await failures()) === 0);
    } finally {
      await loop.stop();
    }
  });
});
