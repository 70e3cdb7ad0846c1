import { describe, expect, it } from "vitest";
import { describeEvery, describeTiming, previewTiming } from "./timing";

const now = new Date("2030-01-01T10:02:00Z");

describe("previewTiming", () => {
  it("lists the next slots of a cron expression in its zone", () => {
    expect(previewTiming({ cron: "*/15 * * * *", timezone: "UTC", count: 3 }, now).nextFireTimes).toEqual([
      "2030-01-01T10:15:00.000Z",
      "2030-01-01T10:30:00.000Z",
      "2030-01-01T10:45:00.000Z",
    ]);
    expect(previewTiming({ cron: "0 9 * * *", timezone: "America/New_York", count: 1 }, now).nextFireTimes).toEqual(["2030-01-01T14:00:00.000Z"]);
  });
  it("lists interval slots", () => {
    expect(previewTiming({ everySeconds: "300", count: 2 }, now).nextFireTimes).toEqual(["2030-01-01T10:05:00.000Z", "2030-01-01T10:10:00.000Z"]);
  });
  it("names the field at fault", () => {
    expect(previewTiming({ cron: "61 * * * *" }, now).error?.field).toBe("cron");
    expect(previewTiming({ cron: "0 * * * *", timezone: "Mars/Olympus" }, now).error?.field).toBe("timezone");
    expect(previewTiming({ everySeconds: "0" }, now).error?.field).toBe("everySeconds");
    expect(previewTiming({}, now).error?.field).toBe("cron");
  });
});

describe("describeTiming", () => {
  it("describes cron and intervals", () => {
    expect(describeTiming({ cron: "0 2 * * *", timezone: "Europe/London" })).toBe("At 02:00 AM (Europe/London)");
    expect(describeTiming({ cron: "nope" })).toBeNull();
    expect(describeEvery(300)).toBe("Every 5 minutes");
    expect(describeEvery(1)).toBe("Every second");
    expect(describeEvery(90)).toBe("Every 90 seconds");
  });
});
