// The sign-in throttle on a real database: its counts are rows every web process shares, and every
// age is read from the database clock (moved here with lib/testing/clock.ts, never by sleeping).
// Two pools stand in for two web processes: each has its own connections and nothing in memory.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, createPool, type Db } from "../db/client";
import { advanceClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { deleteStaleLoginFailures, owedMs, recordLoginFailure, recordLoginSuccess, throttleWaitMs } from "./throttle";

const T0 = new Date("2030-03-01T09:00:00Z");
const t = setupTestDatabase({ clock: T0 });

let other: { pool: ReturnType<typeof createPool>; db: Db };
beforeAll(() => {
  const pool = createPool(t.url, { max: 5, applicationName: "slotkeeper:test:second-web" });
  other = { pool, db: createDb(pool) };
});
afterAll(async () => {
  await other.pool.end();
});

const rows = async () =>
  (await t.pool.query<{ kind: string; subject: string; failures: number }>("SELECT kind, subject, failures FROM login_failures ORDER BY kind, subject")).rows;

describe("owedMs", () => {
  it("is free for five failures, then doubles from one second, capped at five minutes", () => {
    expect(owedMs(4, 0)).toBe(0);
    expect(owedMs(5, 0)).toBe(1_000);
    expect(owedMs(6, 500)).toBe(1_500);
    expect(owedMs(30, 0)).toBe(300_000);
    expect(owedMs(6, 2_000)).toBe(0);
  });
});

describe("login throttle in the database", () => {
  it("lets five failures through, then makes each next try wait twice as long, by the database clock", async () => {
    const a = { address: "203.0.113.7", account: "operator" };
    for (let i = 0; i < 5; i++) {
      expect(await throttleWaitMs(t.db, a)).toBe(0);
      await recordLoginFailure(i % 2 ? other.db : t.db, a);
    }
    expect(await throttleWaitMs(t.db, a)).toBe(1_000);
    expect(await throttleWaitMs(other.db, a)).toBe(1_000);
    await advanceClock(t.pool, 1_000);
    expect(await throttleWaitMs(other.db, a)).toBe(0);
    await recordLoginFailure(other.db, a);
    await advanceClock(t.pool, 500);
    expect(await throttleWaitMs(t.db, a)).toBe(1_500);
    await advanceClock(t.pool, 1_500);
    expect(await throttleWaitMs(t.db, a)).toBe(0);
    await recordLoginSuccess(t.db, a);
    expect(await throttleWaitMs(other.db, a)).toBe(0);
    // The address's count is gone; the account's stays.
    expect(await rows()).toEqual([{ kind: "account", subject: "operator", failures: 6 }]);
  });

  it("counts failures sent at once from two processes exactly, against both the address and the account", async () => {
    const a = { address: "198.51.100.20", account: "alice" };
    await Promise.all(Array.from({ length: 40 }, (_v, i) => recordLoginFailure(i % 2 ? other.db : t.db, a)));
    expect(await rows()).toEqual([
      { kind: "account", subject: "alice", failures: 40 },
      { kind: "address", subject: "198.51.100.20", failures: 40 },
    ]);
    expect(await throttleWaitMs(other.db, a)).toBe(300_000);
  });

  it("delays an account only for addresses that have failed: a stranger cannot lock the real user out", async () => {
    const stranger = { address: "203.0.113.7", account: "alice" };
    for (let i = 0; i < 10; i++) await recordLoginFailure(t.db, stranger);
    expect(await throttleWaitMs(t.db, stranger)).toBeGreaterThan(0);
    // Alice at home: no failures from there, so the account's count does not hold her back.
    const home = { address: "198.51.100.1", account: "alice" };
    expect(await throttleWaitMs(other.db, home)).toBe(0);
    // Another of the stranger's addresses gets one guess, then the account's delay catches it.
    const second = { address: "192.0.2.9", account: "alice" };
    expect(await throttleWaitMs(other.db, second)).toBe(0);
    await recordLoginFailure(other.db, second);
    expect(await throttleWaitMs(t.db, second)).toBeGreaterThan(0);
    // The real user signing in does not reset the account's count for the stranger.
    await recordLoginSuccess(t.db, home);
    expect(await throttleWaitMs(t.db, second)).toBeGreaterThan(0);
    // Fifteen minutes later everything is forgotten, and a new failure starts the count again at one.
    await advanceClock(t.pool, 15 * 60_000 + 1);
    expect(await throttleWaitMs(t.db, second)).toBe(0);
    expect(await throttleWaitMs(t.db, stranger)).toBe(0);
    await recordLoginFailure(t.db, second);
    expect((await rows()).find((r) => r.kind === "account")?.failures).toBe(1);
  });

  it("an unknown address is one address, and the sweep deletes only counts that left the window", async () => {
    await recordLoginFailure(t.db, { address: null, account: "bob" });
    await advanceClock(t.pool, 10 * 60_000);
    await recordLoginFailure(t.db, { address: "192.0.2.50", account: "carol" });
    await advanceClock(t.pool, 5 * 60_000 + 1);
    expect(await deleteStaleLoginFailures(t.db)).toBe(2);
    expect(await rows()).toEqual([
      { kind: "account", subject: "carol", failures: 1 },
      { kind: "address", subject: "192.0.2.50", failures: 1 },
    ]);
  });

  it("writes both counts or neither: a failure that cannot be stored is an error and leaves nothing", async () => {
    // An account name PostgreSQL refuses to store (a NUL byte) makes the one statement fail whole.
    await expect(recordLoginFailure(t.db, { address: "192.0.2.60", account: "bad\u0000name" })).rejects.toThrow();
    expect(await rows()).toEqual([]);
  });
});
