import { describe, expect, it } from "vitest";
import { runCli } from "./cli.js";

describe("runCli", () => {
  it("returns the exit code and output of a call that finishes", () => {
    const r = runCli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("throws, naming the command, when a call is killed for taking too long", () => {
    expect(() => runCli(["list-attacks"], { timeoutMs: 1 })).toThrow(
      /^provael list-attacks was killed after 0\.001 s/,
    );
  });
});
