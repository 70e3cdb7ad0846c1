import { describe, expect, it } from "vitest";
import { intArray, tidArray } from "./prepared";

describe("array literals for hot-path parameters", () => {
  it("writes integers and nulls as PostgreSQL reads them", () => {
    expect(intArray([])).toBe("{}");
    expect(intArray([1, 22, null, undefined, -3])).toBe("{1,22,NULL,NULL,-3}");
  });

  it("refuses what is not a finite number or a tid, rather than sending it", () => {
    expect(() => intArray([Number.NaN])).toThrow(/not a finite number/);
    expect(() => tidArray(['(1,2)"'])).toThrow(/not a tid/);
  });

  it("quotes tids, whose comma would otherwise split them", () => {
    expect(tidArray(["(0,1)", "(12,345)"])).toBe('{"(0,1)","(12,345)"}');
  });
});
