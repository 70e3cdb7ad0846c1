import { describe, expect, it } from "vitest";
import { seededRandom } from "../testing/random";
import { parseIdList } from "./id-list";

describe("parseIdList", () => {
  it("reads what String(ids) wrote, for ids up to 2^53 - 1", () => {
    const r = seededRandom(41);
    for (let k = 0; k < 200; k++) {
      const ids = Array.from({ length: r.int(50) + 1 }, () => (r.next() < 0.1 ? Number.MAX_SAFE_INTEGER - r.int(1000) : r.int(10 ** (1 + r.int(12))) + 1));
      expect(parseIdList(ids.join(","))).toEqual(ids);
    }
  });

  it("reads nothing from an empty or absent list, and refuses anything but digits and commas", () => {
    expect(parseIdList(null)).toEqual([]);
    expect(parseIdList("")).toEqual([]);
    expect(() => parseIdList("1,-2")).toThrow(/unexpected character "-" at 2/);
    expect(() => parseIdList("{1,2}")).toThrow(/unexpected character/);
  });
});
