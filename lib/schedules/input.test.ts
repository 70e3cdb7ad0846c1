import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { parseScheduleInput } from "./input";

const base = { name: "nightly-report", handler: "http", cron: "0 2 * * *" };

function fieldOf(body: unknown, mode: "create" | "patch" = "create", opts = {}): string | undefined {
  try {
    parseScheduleInput(body, mode, opts);
  } catch (err) {
    if (err instanceof AppError && err.kind === "invalid") return err.field;
    throw err;
  }
  return undefined;
}

describe("parseScheduleInput", () => {
  it("accepts the example body of docs/api.md", () => {
    const input = parseScheduleInput(
      { ...base, payload: { url: "https://example.test/hook", method: "POST" }, timezone: "Europe/London", catchUp: "latest", maxLatenessSeconds: 3600, jitterSeconds: 0, overlap: "allow", retry: { maxAttempts: 6, baseSeconds: 30, capSeconds: 900 }, leaseSeconds: 60, enabled: true },
      "create",
    );
    expect(input.timezone).toBe("Europe/London");
  });

  it("accepts 6-field cron, aliases and intervals", () => {
    expect(fieldOf({ ...base, cron: "*/10 * * * * *" })).toBeUndefined();
    expect(fieldOf({ ...base, cron: "@hourly" })).toBeUndefined();
    expect(fieldOf({ name: "x", handler: "noop", everySeconds: 1 })).toBeUndefined();
  });

  it.each([
    [{ ...base, cron: "61 * * * *" }, "cron"],
    [{ ...base, cron: "0 0 30 2 *" }, "cron"], // never fires
    [{ ...base, timezone: "Mars/Olympus" }, "timezone"],
    [{ name: "x", handler: "noop", everySeconds: 0.5 }, "everySeconds"],
    [{ name: "x", handler: "noop", everySeconds: 0 }, "everySeconds"],
    [{ ...base, everySeconds: 60 }, "everySeconds"],
    [{ name: "x", handler: "noop" }, "cron"],
    [{ ...base, maxLatenessSeconds: -5 }, "maxLatenessSeconds"],
    [{ ...base, leaseSeconds: 10 ** 9 }, "leaseSeconds"],
    [{ ...base, jitterSeconds: -1 }, "jitterSeconds"],
    [{ ...base, retry: { capSeconds: -1 } }, "retry.capSeconds"],
    [{ ...base, retry: { baseSeconds: 60, capSeconds: 30 } }, "retry.capSeconds"],
    [{ ...base, retry: { maxAttempts: 3, colour: "red" } }, "retry.colour"],
    [{ ...base, payload: "not an object" }, "payload"],
    [{ ...base, payload: [1, 2] }, "payload"],
    [{ ...base, colour: "red" }, "colour"],
    [{ ...base, name: "" }, "name"],
    [{ ...base, name: "a/b" }, "name"],
    [{ ...base, name: "x".repeat(201) }, "name"],
    [{ ...base, catchUp: "sometimes" }, "catchUp"],
    [{ ...base, handler: 7 }, "handler"],
  ])("names the field at fault: %j → %s", (body, field) => {
    expect(fieldOf(body)).toBe(field);
  });

  it("refuses a payload over the size limit", () => {
    expect(fieldOf({ ...base, payload: { blob: "x".repeat(100) } }, "create", { payloadMaxBytes: 50 })).toBe("payload");
  });

  it("patch: any subset, plus version; unknown fields refused", () => {
    expect(parseScheduleInput({ version: 3, jitterSeconds: 10 }, "patch")).toEqual({ version: 3, jitterSeconds: 10 });
    expect(fieldOf({ version: 3, nope: 1 }, "patch")).toBe("nope");
    expect(fieldOf({ cron: "bad cron" }, "patch")).toBe("cron");
  });
});
