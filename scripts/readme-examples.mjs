// Regenerates the README's console examples from the built CLI (run after `npm run build`):
// each example sits between `<!-- example: NAME -->` and `<!-- /example -->`, and its text is what
// the command printed, run in a scratch directory so the paths it prints are the ones shown. A
// test (test/readme-examples.test.ts) runs the same commands and fails when the README is stale.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "dist", "cli", "main.js");
export const README = join(ROOT, "README.md");

/** The examples: the command a reader types (after `npx provael`), and its arguments. */
export const EXAMPLES = {
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
export function runExample(args) {
  const cwd = mkdtempSync(join(tmpdir(), "provael-readme-"));
  try {
    const r = spawnSync(process.execPath, [CLI, ...args], {
      cwd,
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, NO_COLOR: "1" },
    });
    if (r.status !== 0)
      throw new Error(`provael ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    // The full digest is in report.json; eight hex digits say which one it is.
    const out = r.stdout.replace(/sha256:([0-9a-f]{8})[0-9a-f]{56}/g, "sha256:$1…").trim();
    return `$ npx provael ${args.join(" ")}\n\n${out}`;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** The README with every example block replaced by what its command prints now. */
export function renderReadme(text, run = runExample) {
  let seen = 0;
  const next = text.replace(
    /(<!-- example: ([a-z-]+) -->\n```console\n)[\s\S]*?(\n```\n<!-- \/example -->)/g,
    (_m, open, name, close) => {
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(README, renderReadme(readFileSync(README, "utf8")));
  console.log(`wrote README.md (${Object.keys(EXAMPLES).join(", ")})`);
}
