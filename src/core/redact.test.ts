import { describe, expect, it } from "vitest";
import {
  isSecretKey,
  REDACTED,
  redactArgv,
  redactPolicyOptions,
  redactText,
  redactUrl,
  secretsInArgv,
  secretValues,
} from "./redact.js";

describe("redaction", () => {
  it("names: keys, tokens, passwords are secret; unnormKey and layout are not", () => {
    for (const k of ["apiKey", "api_key", "--api-key", "hfToken", "PASSWORD", "auth", "secret"])
      expect(isSecretKey(k), k).toBe(true);
    for (const k of ["unnormKey", "--unnorm-key", "layout", "replan", "timeoutMs", "ioMap"])
      expect(isSecretKey(k), k).toBe(false);
  });

  it("URLs lose their credentials and nothing else", () => {
    expect(redactUrl("ws://bob:hunter2@10.0.0.5:8000/x?a=b@c")).toBe(
      `ws://${REDACTED}@10.0.0.5:8000/x?a=b@c`,
    );
    expect(redactUrl("lost the connection to http://tok@h:1: reset")).toBe(
      `lost the connection to http://${REDACTED}@h:1: reset`,
    );
    expect(redactUrl("ws://10.0.0.5:8000 and bob@example.com")).toBe(
      "ws://10.0.0.5:8000 and bob@example.com",
    );
  });

  it("command lines: secret flags, secret key=value options, URL credentials", () => {
    const argv = [
      "attack",
      "--api-key",
      "K1234",
      "--token=T1234",
      "--policy-option",
      "hfToken=H1234",
      "--policy-option=password=P1234",
      "--policy-option",
      "replan=2",
      "--unnorm-key",
      "bridge_orig",
      "--policy-url",
      "ws://u:pw12@h:1",
    ];
    expect(redactArgv(argv)).toEqual([
      "attack",
      "--api-key",
      REDACTED,
      `--token=${REDACTED}`,
      "--policy-option",
      `hfToken=${REDACTED}`,
      `--policy-option=password=${REDACTED}`,
      "--policy-option",
      "replan=2",
      "--unnorm-key",
      "bridge_orig",
      "--policy-url",
      `ws://${REDACTED}@h:1`,
    ]);
    expect(secretsInArgv(argv).sort()).toEqual(["H1234", "K1234", "P1234", "T1234"]);
    // A known secret is redacted wherever it sits, even as a positional argument.
    expect(redactArgv(["x", "K1234"], ["K1234"])).toEqual(["x", REDACTED]);
  });

  it("policy options: secret values collected and replaced, the rest kept", () => {
    const o = { url: "ws://al:pw%21x@h:1", extra: { apiKey: "K1234", replan: 2, layout: "x" } };
    expect(secretValues(o, {}).sort()).toEqual(["K1234", "pw!x", "pw%21x"].sort());
    expect(redactPolicyOptions(o)).toEqual({
      url: `ws://${REDACTED}@h:1`,
      extra: { apiKey: REDACTED, replan: 2, layout: "x" },
    });
    expect(redactText("server said K1234 and pw!x", secretValues(o, {}))).toBe(
      `server said ${REDACTED} and ${REDACTED}`,
    );
  });
});
