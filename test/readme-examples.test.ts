/**
 * The README's console examples are what the built CLI prints today: each sits between
 * `<!-- example: NAME -->` and `<!-- /example -->`, and its text is what the command printed in a
 * scratch directory, so the paths it prints are the ones shown. This test runs the same commands
 * and fails when the README shows anything else; `UPDATE_DOCS=1` rewrites the blocks instead
 * (`npm run docs` does, after building).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "./support/cli.js";
import { tempDir } from "./support/tmp.js";

const README = join(import.meta.dirname, "..", "README.md");

/** The examples: the command a reader types (after `npx provael`), and its arguments. */
const EXAMPLES: Record<string, string[]> = {
  quickstart: [
    "attack",
    "--policy",
    "stub",
    "--suite",
    "stub",
    "--attacks",
    "none,control,instruction",
    "--seeds",
    "10",
    "--out",
    "runs/quick",
  ],
};

/** What `npx provael ARGS` prints on stdout, as the README shows it (digests shortened). */
function runExample(args: string[]): string {
  const r = runCli(args, { cwd: tempDir(), env: { NO_COLOR: "1" } });
  if (r.code !== 0) throw new Error(`provael ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  // The full digest is in report.json; eight hex digits say which one it is.
  const out = r.stdout.replace(/sha256:([0-9a-f]{8})[0-9a-f]{56}/g, "sha256:$1…").trim();
  return `$ npx provael ${args.join(" ")}\n\n${out}`;
}

/** The README with every example block replaced by what its command prints now. */
function renderReadme(text: string, run: (args: string[]) => string = runExample): string {
  let seen = 0;
  const next = text.replace(
    /(<!-- example: ([a-z-]+) -->\n```console\n)[\s\S]*?(\n```\n<!-- \/example -->)/g,
    (_m, open: string, name: string, close: string) => {
      const args = EXAMPLES[name];
      if (!args) throw new Error(`README example '${name}' is not one of ${Object.keys(EXAMPLES)}`);
      seen += 1;
      return `${open}${run(args)}${close}`;
    },
  );
  if (seen !== Object.keys(EXAMPLES).length)
    throw new Error(`README has ${seen} example blocks, expected ${Object.keys(EXAMPLES).length}`);
  return next;
}

describe("README examples", () => {
  it("match what the CLI prints (regenerate: npm run build && UPDATE_DOCS=1 npx vitest run test/readme-examples.test.ts)", () => {
    const text = readFileSync(README, "utf8");
    const now = renderReadme(text);
    if (process.env.UPDATE_DOCS === "1") writeFileSync(README, now);
    else expect(now).toBe(text);
  }, 120_000);

  it("are all covered: a block naming an unknown example is refused", () => {
    const bad = "<!-- example: nope -->\n```console\nx\n```\n<!-- /example -->\n";
    expect(() => renderReadme(bad, () => "")).toThrow(/'nope' is not one of/);
  });
});
