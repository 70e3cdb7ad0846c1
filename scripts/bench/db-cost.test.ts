// scripts/bench/db-cost.ts as docs/benchmarks.md runs it, at a tiny size against the test server:
// every shape of both sides drains every run, which the script checks on the rows themselves
// (each runs row done with a start, each raw_runs row done on its first claim) before it reports.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";

const S = 1_600;

describe("scripts/bench/db-cost.ts", () => {
  it(`reports the database's CPU per run of both sides in every shape, each drain of all ${S} runs checked on the rows`, async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "scripts/bench/db-cost.ts", String(S), "100"], {
      env: { ...process.env, DATABASE_URL: inject("pgAdminUrl") },
      timeout: 170_000,
    });
    const report = JSON.parse(stdout);
    const cost = { runs: S, seconds: expect.any(Number), databaseMicros: expect.any(Number), clientMicros: expect.any(Number) };
    const shapes = { alone: cost, twoInTurn: cost, twoPipelined: cost };
    expect(report).toMatchObject({ schedules: S, batch: 100, slotkeeper: shapes, raw: shapes });
  }, 180_000);
});
