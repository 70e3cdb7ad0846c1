import { describe, expect, it } from "vitest";
import { DEFAULT_VALUES, toBody, validateValues } from "./schedule-form-values";

const valid = { ...DEFAULT_VALUES, name: "nightly-report" };

describe("validateValues", () => {
  it("accepts the defaults with a name", () => {
    expect(validateValues(valid, "create")).toEqual({});
  });
  it("reports each field on its own, with the API's field names", () => {
    const e = validateValues({ ...DEFAULT_VALUES, name: "", cron: "61 * * * *", payload: "{ nope", retryCapSeconds: "x" }, "create");
    expect(Object.keys(e).sort()).toEqual(["cron", "name", "payload", "retry.capSeconds"]);
    expect(e.payload).toMatch(/not valid JSON/);
    expect(e.cron).toMatch(/Invalid cron/);
  });
  it("checks intervals, time zones and cross-field rules", () => {
    expect(validateValues({ ...valid, timingKind: "interval", everySeconds: "0" }, "create").everySeconds).toMatch(/at least 1/);
    expect(validateValues({ ...valid, timezone: "Mars/Base" }, "create").timezone).toMatch(/Unknown time zone/);
    expect(validateValues({ ...valid, retryBaseSeconds: "100", retryCapSeconds: "50" }, "create")["retry.capSeconds"]).toMatch(/at least retry.baseSeconds/);
    expect(validateValues({ ...valid, payload: "[1]" }, "create").payload).toMatch(/JSON object/);
    expect(validateValues({ ...valid, maxLatenessSeconds: "soon" }, "create").maxLatenessSeconds).toBeDefined();
  });
});

describe("toBody", () => {
  it("builds the API's schedule body (POST /api/schedules)", () => {
    expect(toBody({ ...valid, maxLatenessSeconds: "3600" }, "create")).toEqual({
      name: "nightly-report", description: "", handler: "noop", payload: {}, cron: "*/15 * * * *", timezone: "UTC", catchUp: "latest",
      maxLatenessSeconds: 3600, jitterSeconds: 0, overlap: "allow", retry: { maxAttempts: 6, baseSeconds: 30, capSeconds: 900 }, leaseSeconds: 60, enabled: true, tags: [], queue: "default",
    });
  });
  it("sends the queue and maxConcurrent; an empty maxConcurrent is no limit (cleared on edit), a bad one is named", () => {
    expect(toBody({ ...valid, queue: " reports ", maxConcurrent: "2" }, "create")).toMatchObject({ queue: "reports", maxConcurrent: 2 });
    expect(toBody({ ...valid, maxConcurrent: "" }, "edit")).toMatchObject({ maxConcurrent: null });
    expect(validateValues({ ...valid, maxConcurrent: "0" }, "create")).toMatchObject({ maxConcurrent: expect.stringMatching(/maxConcurrent/) });
    expect(validateValues({ ...valid, queue: "a b" }, "create")).toMatchObject({ queue: expect.stringMatching(/queue/) });
    expect(validateValues({ ...valid, overlap: "forbid", maxConcurrent: "3" }, "create")).toMatchObject({ maxConcurrent: expect.stringMatching(/overlap allow/) });
  });
  it("clears the other kind of timing on edit", () => {
    expect(toBody({ ...valid, timingKind: "interval", everySeconds: "2" }, "edit")).toMatchObject({ cron: null, everySeconds: 2 });
    expect(toBody({ ...valid, payload: "{" }, "edit")).toBeNull();
  });
});
