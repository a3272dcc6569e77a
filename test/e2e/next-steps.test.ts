/**
 * Every `next:` line a run prints must work when followed: the stub quickstart's and the default
 * pair's (tiny-vla on tabletop), each on a small plan. Files named are there, `provael view`
 * serves, `list-attacks` answers, and a calibrate line is printed only where calibrate can fit
 * every task it names (followed with --dry-run here: the 1% target needs 299 benign episodes a
 * task, minutes of physics; the dry run makes every check the real run makes before playing).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

/** The lines after `next:` (the command a line names starts at `provael `). */
function nextLines(stdout: string): string[] {
  const lines = stdout.trimEnd().split("\n");
  const at = lines.lastIndexOf("next:");
  expect(at, stdout).toBeGreaterThan(-1);
  return lines.slice(at + 1).map((l) => l.trim());
}

/** `provael view DIR` serves the run: started, asked for its page, stopped. */
async function followView(args: string[], cwd: string): Promise<void> {
  const child = spawn(process.execPath, [CLI, ...args, "--port", "0"], { cwd });
  try {
    const url = await new Promise<string>((done, fail) => {
      let out = "";
      child.stdout.on("data", (b: Buffer) => {
        out += b.toString();
        const m = /at (http:\/\/\S+)/.exec(out);
        if (m) done(m[1] as string);
      });
      child.on("exit", (code) => fail(new Error(`provael view exited ${code}: ${out}`)));
    });
    const res = await fetch(url);
    expect(res.status).toBe(200);
  } finally {
    child.kill("SIGTERM");
  }
}

/** Follows one `next:` line; returns what it followed, for the assertions on coverage. */
async function follow(line: string, cwd: string): Promise<string> {
  const file = /^(?:open|read) (\S+)/.exec(line);
  if (file) {
    expect(existsSync(file[1] as string), line).toBe(true);
    return "file";
  }
  const at = line.indexOf("provael ");
  expect(at, `a next: line that is neither a file nor a command: ${line}`).toBeGreaterThan(-1);
  // The command runs to the end of the line, or to its "(count, time)" note.
  const command = line.slice(at + "provael ".length).replace(/ \(.*\)$/, "");
  const args = command.split(" ");
  if (args[0] === "view") {
    await followView(args, cwd);
    return "view";
  }
  if (args[0] === "calibrate") {
    const r = runCli([...args, "--dry-run"], { cwd });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).not.toContain("would refuse");
    expect(r.stdout).toMatch(/= [0-9,]+ benign episodes, estimated (about|under)/);
    return "calibrate";
  }
  const r = runCli(args, { cwd });
  expect(r.code, `${line}\n${r.stderr}`).toBe(0);
  return args[0] as string;
}

describe("the next: lines a run prints can be followed", () => {
  it("the stub quickstart: files, view, list-attacks; no calibrate line (no hazard positions)", async () => {
    const cwd = tempDir();
    const out = join(cwd, "quick");
    const r = runCli(
      ["attack", "--policy", "stub", "--suite", "stub"].concat([
        "--attacks",
        "none,control,instruction",
        "--seeds",
        "2",
        "--out",
        out,
      ]),
      { cwd },
    );
    expect(r.code, r.stderr).toBe(0);
    const followed: string[] = [];
    for (const line of nextLines(r.stdout)) followed.push(await follow(line, cwd));
    expect(followed).toEqual(["file", "view", "list-attacks"]);
  }, 300_000);

  it("the default pair on one task: its calibrate line is scoped to that task, counted and timed", async () => {
    const cwd = tempDir();
    const out = join(cwd, "default");
    const r = runCli(
      ["attack", "--tasks", "kitchen_red_block", "--attacks", "none", "--seeds", "1"].concat([
        "--no-html",
        "--out",
        out,
      ]),
      { cwd, timeoutMs: 240_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = nextLines(r.stdout);
    const calibrate = lines.find((l) => l.includes("provael calibrate"));
    expect(calibrate).toMatch(
      /provael calibrate --policy tiny-vla --suite tabletop --tasks kitchen_red_block --out calib\/tiny-vla-tabletop \(299 benign episodes, about \d+ (s|min)\)$/,
    );
    const followed: string[] = [];
    for (const line of lines) followed.push(await follow(line, cwd));
    expect(followed).toEqual(["file", "view", "calibrate", "list-attacks"]);
  }, 600_000);
});
