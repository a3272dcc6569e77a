import { describe, expect, it } from "vitest";
import { ProvaelError } from "../core/errors.js";
import { markRetryable, markServerError } from "../policies/served/options.js";
import { isInfrastructureError } from "./pool.js";

describe("isInfrastructureError", () => {
  it("counts transport, timeout, refused connection and the server's error frame", () => {
    expect(isInfrastructureError(new ProvaelError("policy/unavailable", "refused"))).toBe(true);
    expect(isInfrastructureError(new ProvaelError("policy/timeout", "no reply"))).toBe(true);
    expect(isInfrastructureError(markRetryable(new Error("socket hang up")))).toBe(true);
    expect(
      isInfrastructureError(markServerError(new ProvaelError("policy/error", "traceback"))),
    ).toBe(true);
  });

  it("never a policy's own failure", () => {
    expect(isInfrastructureError(new ProvaelError("policy/bad-action", "NaN"))).toBe(false);
    expect(isInfrastructureError(new ProvaelError("policy/protocol", "malformed"))).toBe(false);
    expect(isInfrastructureError(new ProvaelError("policy/error", "threw"))).toBe(false);
    expect(isInfrastructureError(new Error("boom"))).toBe(false);
    expect(isInfrastructureError(undefined)).toBe(false);
  });
});
