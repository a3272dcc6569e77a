import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical-json.js";
import { digestJson, sha256 } from "./digest.js";

describe("canonicalJson (RFC 8785)", () => {
  it("sorts keys by UTF-16 code units and drops whitespace", () => {
    expect(
      canonicalJson({ b: 1, a: [true, null, "x"], "\u20ac": 1, "\r": 2, "\ud83d\ude00": 3 }),
    ).toBe('{"\\r":2,"a":[true,null,"x"],"b":1,"€":1,"😀":3}');
  });

  it("writes numbers in the ECMAScript shortest form", () => {
    // Examples from RFC 8785 appendix B.
    const cases: [number, string][] = [
      [0, "0"],
      [-0, "0"],
      [1e21, "1e+21"],
      [1e-7, "1e-7"],
      [333333333.3333333, "333333333.3333333"],
      [9007199254740992, "9007199254740992"],
      [295147905179352830000, "295147905179352830000"],
      [5e-324, "5e-324"],
      [-1.7976931348623157e308, "-1.7976931348623157e+308"],
    ];
    for (const [n, s] of cases) expect(canonicalJson(n)).toBe(s);
  });

  it("refuses non-finite numbers instead of writing null", () => {
    expect(() => canonicalJson({ x: Number.NaN })).toThrow(/\$\.x/);
    expect(() => canonicalJson([Number.POSITIVE_INFINITY])).toThrow();
  });

  it("gives digests independent of key order", () => {
    expect(digestJson({ a: 1, b: { c: 2, d: 3 } })).toBe(digestJson({ b: { d: 3, c: 2 }, a: 1 }));
    expect(sha256("abc")).toBe(
      "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });
});
