import fc from "fast-check";
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
    // The URL's password is one too (an error message may quote it alone).
    expect(secretsInArgv(argv).sort()).toEqual(["H1234", "K1234", "P1234", "T1234", "pw12"]);
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

describe("secrets in a URL's query string", () => {
  it("token, api_key, key, sig and signed-URL parameters are redacted, the rest kept", () => {
    const url =
      "wss://h:8000/ws?token=tok-51c6&model=pi0&api_key=ak-77f0&key=AIzaX1&sig=s1g-9a&X-Amz-Signature=abcd1234&page=2";
    const shown = redactUrl(url);
    expect(shown).toBe(
      `wss://h:8000/ws?token=${REDACTED}&model=pi0&api_key=${REDACTED}&key=${REDACTED}&sig=${REDACTED}&X-Amz-Signature=${REDACTED}&page=2`,
    );
    expect(redactArgv(["attack", "--policy-url", url])[2]).toBe(shown);
    expect(redactArgv([`--policy-url=${url}`])[0]).toBe(`--policy-url=${shown}`);
    expect(secretValues({ url }, {}).sort()).toEqual(
      ["AIzaX1", "abcd1234", "ak-77f0", "s1g-9a", "tok-51c6"].sort(),
    );
    expect(secretsInArgv(["--policy-url", url])).toEqual(
      expect.arrayContaining(["tok-51c6", "ak-77f0", "AIzaX1", "s1g-9a", "abcd1234"]),
    );
    expect(redactPolicyOptions({ url }).url).toBe(shown);
    // An error message that quotes the URL (or only the token, decoded) is redacted too.
    expect(redactText(`cannot reach ${url}: reset`)).toBe(`cannot reach ${shown}: reset`);
    expect(redactText("the server refused tok-51c6", secretValues({ url }, {}))).toBe(
      `the server refused ${REDACTED}`,
    );
  });

  it("any secret-named parameter of any URL loses its value (property)", () => {
    const name = fc.constantFrom(
      "token",
      "access_token",
      "api_key",
      "apikey",
      "key",
      "sig",
      "signature",
      "X-Amz-Credential",
      "password",
      "secret",
      "auth",
    );
    const value = fc.stringMatching(/^[A-Za-z0-9._~%-]{4,24}$/);
    const benign = fc.array(
      fc.tuple(fc.constantFrom("model", "page", "lang", "v"), fc.stringMatching(/^[a-z0-9]{1,6}$/)),
      { maxLength: 3 },
    );
    fc.assert(
      fc.property(name, value, benign, benign, (n, v, before, after) => {
        fc.pre(!v.includes(REDACTED));
        const params = [...before, [n, v], ...after].map(([k, x]) => `${k}=${x}`).join("&");
        const url = `ws://127.0.0.1:9000/act?${params}`;
        const out = redactArgv(["attack", "--policy-url", url]).join(" ");
        expect(out).not.toContain(`${n}=${v}`);
        expect(out).toContain(`${n}=${REDACTED}`);
        for (const [k, x] of [...before, ...after]) expect(out).toContain(`${k}=${x}`);
      }),
      { numRuns: 300, seed: 59 },
    );
  });
});
