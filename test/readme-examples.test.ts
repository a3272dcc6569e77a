/**
 * The README's console examples are what the built CLI prints today: each block is regenerated
 * by `node scripts/readme-examples.mjs` (after `npm run build`), and this test runs the same
 * commands and fails when the README shows anything else.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without type declarations, shared with the generator.
import { README, renderReadme } from "../scripts/readme-examples.mjs";

describe("README examples", () => {
  it("match what the CLI prints (regenerate: npm run build && node scripts/readme-examples.mjs)", () => {
    const text = readFileSync(README as string, "utf8");
    expect((renderReadme as (t: string) => string)(text)).toBe(text);
  }, 120_000);

  it("are all covered: a block naming an unknown example is refused", () => {
    const bad = "<!-- example: nope -->\n```console\nx\n```\n<!-- /example -->\n";
    expect(() => (renderReadme as (t: string, r: () => string) => string)(bad, () => "")).toThrow(
      /'nope' is not one of/,
    );
  });
});
