import { describe, expect, it } from "vitest";
import { defineHandler } from "../lib/handlers/types";
import { createLogger } from "../lib/log";
import type { ClaimedRun } from "../lib/runs/claim";
import { runAttempt } from "./attempt";
import { AttemptAbort } from "./attempt-abort";
import { createHandlerRegistry } from "./handlers/registry";

const run = (payload: unknown): ClaimedRun =>
  ({
    id: 7,
    scheduleId: 3,
    scheduleName: "billing",
    handler: "capture",
    payload,
    scheduledFor: new Date("2026-11-01T00:00:00Z"),
    attempt: 2,
    leaseSeconds: 60,
    origin: "schedule",
    retry: { maxAttempts: 3, baseSeconds: 30, capSeconds: 900 },
    maxAttempts: 3,
  }) as unknown as ClaimedRun;

describe("runAttempt", () => {
  it("hands the handler its key, token and payload, with { $env } references resolved in the worker", async () => {
    let seen: { payload: unknown; key: string; token: number } | undefined;
    const registry = createHandlerRegistry([
      defineHandler({ name: "capture", idempotent: true, description: "", run: async (ctx) => void (seen = { payload: ctx.payload, key: ctx.idempotencyKey, token: ctx.fencingToken }) }),
    ]);
    process.env.SK_TEST_SECRET = "s3cret";
    const result = await runAttempt(run({ headers: { Authorization: { $env: "SK_TEST_SECRET" } } }), { registry, workerId: "w", log: createLogger("test", "silent") }, new AttemptAbort());
    expect(result.outcome).toBe("succeeded");
    expect(seen).toEqual({ payload: { headers: { Authorization: "s3cret" } }, key: "sk:3:2026-11-01T00:00:00.000Z", token: 2 });
  });

  it("fails (and retries) an attempt whose payload names an unset variable", async () => {
    const registry = createHandlerRegistry([defineHandler({ name: "capture", idempotent: true, description: "", run: async () => {} })]);
    const result = await runAttempt(run({ token: { $env: "SK_TEST_UNSET_VARIABLE" } }), { registry, workerId: "w", log: createLogger("test", "silent") }, new AttemptAbort());
    expect(result.outcome).toBe("failed");
    expect(result.error).toMatch(/SK_TEST_UNSET_VARIABLE/);
    expect(result.nonRetryable).toBeFalsy();
  });

  it("turns a handler that throws before returning a promise into a failed attempt", async () => {
    const registry = createHandlerRegistry([
      defineHandler({
        name: "capture",
        idempotent: true,
        description: "",
        run: () => {
          throw new Error("bad config");
        },
      }),
    ]);
    const result = await runAttempt(run({}), { registry, workerId: "w", log: createLogger("test", "silent") }, new AttemptAbort());
    expect(result.outcome).toBe("failed");
    expect(result.error).toBe("bad config");
  });
});
