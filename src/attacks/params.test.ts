import { describe, expect, it } from "vitest";
import { randomFreeze } from "./action.js";
import { givenParams, resolveParams } from "./params.js";
import { lowbitFlips8 } from "./weights.js";

describe("resolveParams", () => {
  it("gives a control its attack's shared values, its own winning, and nothing else of the attack's", () => {
    const given = { freeze: { length: [4, 4], fallback: [0.1, 0.1] } };
    expect(givenParams(randomFreeze, given)).toEqual({ length: [4, 4] });
    expect(resolveParams(randomFreeze, given)).toEqual({ mode: "seeded", length: [4, 4] });
    expect(
      resolveParams(randomFreeze, { ...given, random_freeze: { length: [9, 9] } }),
    ).toMatchObject({ length: [9, 9] });
    expect(resolveParams(lowbitFlips8, { weight_bitflip_8: { bits: [23, 30] } })).toEqual({
      flips: 8,
      bits: [0, 7],
    });
  });

  it("refuses a value that does not fit, as a config error naming where it came from", () => {
    // A plan edited by hand: freeze's length reaches random_freeze, whose schema refuses it.
    expect(() => resolveParams(randomFreeze, { freeze: { length: [9, 3] } })).toThrow(
      expect.objectContaining({
        code: "config/invalid",
        hint: expect.stringContaining("'freeze'"),
      }),
    );
  });
});
