import { describe, it, expect } from "vitest";
import { CronError, describeCron, isValidTimeZone, isWallClockSchedule, nextCronSlot, parseCron } from "./cron";

/** All slots in [from, to), as ISO strings, by repeatedly asking for the next one. */
function slots(cron: string, timezone: string, from: string, to: string): string[] {
  const out: string[] = [];
  let cursor = new Date(Date.parse(from) - 1);
  for (;;) {
    const next = nextCronSlot({ cron, timezone }, cursor);
    if (!next || next.getTime() >= Date.parse(to)) return out;
    out.push(next.toISOString().replace(":00.000Z", "Z"));
    cursor = next;
  }
}

describe("America/New_York, 2026", () => {
  const tz = "America/New_York";
  // Spring forward 2026-03-08 02:00 EST (07:00Z) -> 03:00 EDT.
  it("spring forward: hourly runs in every real hour", () => {
    expect(slots("0 * * * *", tz, "2026-03-08T04:00Z", "2026-03-08T09:00Z")).toEqual([
      "2026-03-08T04:00Z", // 23:00 EST
      "2026-03-08T05:00Z", // 00:00 EST
      "2026-03-08T06:00Z", // 01:00 EST
      "2026-03-08T07:00Z", // 03:00 EDT (02:00 does not exist)
      "2026-03-08T08:00Z", // 04:00 EDT
    ]);
  });
  it("spring forward: daily 02:30 fires once at 03:00 EDT", () => {
    expect(slots("30 2 * * *", tz, "2026-03-07T00:00Z", "2026-03-10T00:00Z")).toEqual([
      "2026-03-07T07:30Z",
      "2026-03-08T07:00Z",
      "2026-03-09T06:30Z",
    ]);
  });
  it("spring forward: daily 01:30 is unaffected", () => {
    expect(slots("30 1 * * *", tz, "2026-03-07T00:00Z", "2026-03-10T00:00Z")).toEqual([
      "2026-03-07T06:30Z",
      "2026-03-08T06:30Z",
      "2026-03-09T05:30Z",
    ]);
  });
  // Fall back 2026-11-01 02:00 EDT (06:00Z) -> 01:00 EST.
  it("fall back: hourly runs at both 01:00s", () => {
    expect(slots("0 * * * *", tz, "2026-11-01T04:00Z", "2026-11-01T09:00Z")).toEqual([
      "2026-11-01T04:00Z", // 00:00 EDT
      "2026-11-01T05:00Z", // 01:00 EDT
      "2026-11-01T06:00Z", // 01:00 EST
      "2026-11-01T07:00Z", // 02:00 EST
      "2026-11-01T08:00Z",
    ]);
  });
  it("fall back: daily 01:30 fires once, at the first 01:30", () => {
    expect(slots("30 1 * * *", tz, "2026-10-31T00:00Z", "2026-11-03T00:00Z")).toEqual([
      "2026-10-31T05:30Z",
      "2026-11-01T05:30Z", // not again at 06:30Z
      "2026-11-02T06:30Z",
    ]);
    // Asking from inside the repeated hour does not resurrect the second 01:30.
    expect(nextCronSlot({ cron: "30 1 * * *", timezone: tz }, new Date("2026-11-01T06:10:00Z"))?.toISOString()).toBe(
      "2026-11-02T06:30:00.000Z",
    );
  });
  it("fall back: daily 02:30 fires once", () => {
    expect(slots("30 2 * * *", tz, "2026-10-31T00:00Z", "2026-11-03T00:00Z")).toEqual([
      "2026-10-31T06:30Z",
      "2026-11-01T07:30Z",
      "2026-11-02T07:30Z",
    ]);
  });
});

describe("Europe/London, 2026", () => {
  const tz = "Europe/London";
  // Spring forward 2026-03-29 01:00 GMT (01:00Z) -> 02:00 BST.
  it("spring forward: hourly", () => {
    expect(slots("0 * * * *", tz, "2026-03-28T23:00Z", "2026-03-29T03:00Z")).toEqual([
      "2026-03-28T23:00Z",
      "2026-03-29T00:00Z", // 00:00 GMT
      "2026-03-29T01:00Z", // 02:00 BST
      "2026-03-29T02:00Z",
    ]);
  });
  it("spring forward: 01:30 does not exist and fires at 02:00 BST", () => {
    expect(slots("30 1 * * *", tz, "2026-03-28T00:00Z", "2026-03-31T00:00Z")).toEqual([
      "2026-03-28T01:30Z",
      "2026-03-29T01:00Z",
      "2026-03-30T00:30Z",
    ]);
  });
  it("spring forward: 02:30 exists (BST)", () => {
    expect(slots("30 2 * * *", tz, "2026-03-28T00:00Z", "2026-03-31T00:00Z")).toEqual([
      "2026-03-28T02:30Z",
      "2026-03-29T01:30Z",
      "2026-03-30T01:30Z",
    ]);
  });
  // Fall back 2026-10-25 02:00 BST (01:00Z) -> 01:00 GMT.
  it("fall back: hourly runs at both 01:00s", () => {
    expect(slots("0 * * * *", tz, "2026-10-24T23:00Z", "2026-10-25T03:00Z")).toEqual([
      "2026-10-24T23:00Z",
      "2026-10-25T00:00Z", // 01:00 BST
      "2026-10-25T01:00Z", // 01:00 GMT
      "2026-10-25T02:00Z",
    ]);
  });
  it("fall back: 01:30 fires once at 01:30 BST", () => {
    expect(slots("30 1 * * *", tz, "2026-10-24T00:00Z", "2026-10-27T00:00Z")).toEqual([
      "2026-10-24T00:30Z",
      "2026-10-25T00:30Z",
      "2026-10-26T01:30Z",
    ]);
  });
  it("fall back: 02:30 fires once", () => {
    expect(slots("30 2 * * *", tz, "2026-10-24T00:00Z", "2026-10-27T00:00Z")).toEqual([
      "2026-10-24T01:30Z",
      "2026-10-25T02:30Z",
      "2026-10-26T02:30Z",
    ]);
  });
});

describe("named times vs wall-clock", () => {
  it("several wall times in one gap fire once at the transition", () => {
    expect(slots("*/15 2 * * *", "America/New_York", "2026-03-08T06:00Z", "2026-03-08T12:00Z")).toEqual([
      "2026-03-08T07:00Z",
    ]);
  });
  it("lists and ranges are named times; steps in the hour field are wall-clock", () => {
    expect(isWallClockSchedule("0 * * * *")).toBe(true);
    expect(isWallClockSchedule("*/15 * * * *")).toBe(true);
    expect(isWallClockSchedule("0 */2 * * *")).toBe(true);
    expect(isWallClockSchedule("@hourly")).toBe(true);
    expect(isWallClockSchedule("0 0 */2 * * *")).toBe(true);
    expect(isWallClockSchedule("30 2 * * *")).toBe(false);
    expect(isWallClockSchedule("0 9-17 * * *")).toBe(false);
    expect(isWallClockSchedule("0 1,13 * * *")).toBe(false);
    expect(isWallClockSchedule("@daily")).toBe(false);
    expect(isWallClockSchedule("0 30 2 * * *")).toBe(false);
  });
  it("a fall-back range job runs each hour once", () => {
    expect(slots("0 0-3 * * *", "America/New_York", "2026-11-01T03:00Z", "2026-11-01T12:00Z")).toEqual([
      "2026-11-01T04:00Z",
      "2026-11-01T05:00Z",
      "2026-11-01T07:00Z",
      "2026-11-01T08:00Z",
    ]);
  });
});

describe("syntax", () => {
  it("supports a leading seconds field", () => {
    expect(slots("15 30 2 * * *", "UTC", "2026-01-01T00:00Z", "2026-01-03T00:00Z")).toEqual([
      "2026-01-01T02:30:15.000Z",
      "2026-01-02T02:30:15.000Z",
    ]);
    expect(slots("*/20 * * * * *", "UTC", "2026-01-01T00:00Z", "2026-01-01T00:01Z")).toHaveLength(3);
  });
  it("supports aliases", () => {
    const after = new Date("2026-03-15T12:34:56Z"); // a Sunday
    const next = (cron: string) => nextCronSlot({ cron, timezone: "UTC" }, after)?.toISOString();
    expect(next("@yearly")).toBe("2027-01-01T00:00:00.000Z");
    expect(next("@annually")).toBe("2027-01-01T00:00:00.000Z");
    expect(next("@monthly")).toBe("2026-04-01T00:00:00.000Z");
    expect(next("@weekly")).toBe("2026-03-22T00:00:00.000Z");
    expect(next("@daily")).toBe("2026-03-16T00:00:00.000Z");
    expect(next("@midnight")).toBe("2026-03-16T00:00:00.000Z");
    expect(next("@hourly")).toBe("2026-03-15T13:00:00.000Z");
    expect(nextCronSlot({ cron: "@daily", timezone: "Asia/Tokyo" }, after)?.toISOString()).toBe("2026-03-15T15:00:00.000Z");
  });
  it("ORs day-of-month and day-of-week when both are restricted (Vixie)", () => {
    // The 1st and the 15th, plus every Monday, in March 2026 (Mondays: 2, 9, 16, 23, 30).
    const days = slots("0 0 1,15 * 1", "UTC", "2026-03-01T00:00Z", "2026-04-01T00:00Z").map((s) => s.slice(8, 10));
    expect(days).toEqual(["01", "02", "09", "15", "16", "23", "30"]);
    // Only one restricted: that one alone decides.
    expect(slots("0 0 * * 1", "UTC", "2026-03-01T00:00Z", "2026-04-01T00:00Z")).toHaveLength(5);
    expect(slots("0 0 15 * *", "UTC", "2026-03-01T00:00Z", "2026-04-01T00:00Z")).toEqual(["2026-03-15T00:00Z"]);
  });
  it("is strictly after, and ignores the wall clock", () => {
    const spec = { cron: "0 * * * *", timezone: "UTC" };
    expect(nextCronSlot(spec, new Date("2026-01-01T05:00:00Z"))?.toISOString()).toBe("2026-01-01T06:00:00.000Z");
    expect(nextCronSlot(spec, new Date("2026-01-01T04:59:59.999Z"))?.toISOString()).toBe("2026-01-01T05:00:00.000Z");
    expect(nextCronSlot(spec, new Date("1999-12-31T23:30:00Z"))?.toISOString()).toBe("2000-01-01T00:00:00.000Z");
  });
  it("returns null for an expression that never fires", () => {
    expect(nextCronSlot({ cron: "0 0 30 2 *", timezone: "Europe/London" }, new Date("2026-01-01T00:00:00Z"))).toBeNull();
  });
  it("handles fixed-offset zones", () => {
    expect(nextCronSlot({ cron: "30 2 * * *", timezone: "Etc/GMT+5" }, new Date("2026-03-08T00:00:00Z"))?.toISOString()).toBe(
      "2026-03-08T07:30:00.000Z",
    );
    expect(nextCronSlot({ cron: "30 2 * * *", timezone: "Asia/Kolkata" }, new Date("2026-03-08T00:00:00Z"))?.toISOString()).toBe(
      "2026-03-08T21:00:00.000Z",
    );
  });
});

describe("validation", () => {
  const fieldOf = (fn: () => unknown): string | undefined => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(CronError);
      return (err as CronError).field;
    }
    return undefined;
  };
  it.each(["", "* * * *", "1 2 3 4 5 6 7", "61 * * * *", "* 24 * * *", "0 0 32 * *", "0 0 * 13 *", "@often", "banana", "2026-01-01T00:00:00"])(
    "rejects cron %j",
    (cron) => {
      expect(fieldOf(() => parseCron(cron, "UTC"))).toBe("cron");
      expect(() => nextCronSlot({ cron, timezone: "UTC" }, new Date())).toThrow(/cron expression/i);
    },
  );
  it.each(["Mars/Olympus_Mons", "", "EST5EDT6", "America/NewYork"])("rejects zone %j", (timezone) => {
    expect(fieldOf(() => parseCron("0 * * * *", timezone))).toBe("timezone");
    expect(() => parseCron("0 * * * *", timezone)).toThrow(/time zone/);
  });
  it("validates zones", () => {
    expect(isValidTimeZone("America/New_York")).toBe(true);
    expect(isValidTimeZone("UTC")).toBe(true);
    expect(isValidTimeZone("Etc/GMT-14")).toBe(true);
    expect(isValidTimeZone("Nowhere/Special")).toBe(false);
  });
});

describe("describeCron", () => {
  it("uses cronstrue", () => {
    expect(describeCron("30 2 * * *")).toBe("At 02:30 AM");
    expect(describeCron("0 * * * *")).toBe("Every hour");
    expect(() => describeCron("nope")).toThrow(CronError);
  });
});
