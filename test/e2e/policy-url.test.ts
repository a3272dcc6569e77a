/**
 * `--policy-url` is part of the plan (issue 59, defect 7): recorded with its secrets redacted, and
 * `--resume` against another address is refused before anything is played, as
 * docs/served-policies.md says. Before, the journal's plan had no address and a resume against
 * another server was accepted (episodes from two servers in one run).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const root = tempDir("provael-policy-url-");
const PLAN = [
  ...["--suite", "stub", "--attacks", "none", "--seeds", "2", "--horizon", "5"],
  "--no-html",
];
let server: ChildProcess;
let url = "";

beforeAll(async () => {
  server = spawn(
    process.execPath,
    [CLI, "serve-policy", "--policy", "stub", "--protocol", "openpi", "--port", "0", "--json"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  url = await new Promise<string>((resolve, reject) => {
    let out = "";
    server.stdout?.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0] as string).url);
    });
    server.once("exit", (code) => reject(new Error(`serve-policy exited ${code}`)));
  });
}, 120_000);
afterAll(() => {
  if (server.exitCode === null) server.kill("SIGKILL");
});

const attack = (address: string, out: string, more: string[] = []) =>
  runCli(["attack", "--policy", "openpi", "--policy-url", address, ...PLAN, "--out", out, ...more]);

/** An unfinished copy of run `dir`: its journal less the last episode, nothing else. */
function unfinished(dir: string, name: string): string {
  const lines = readFileSync(join(dir, "journal.jsonl"), "utf8").split("\n").filter(Boolean);
  const out = join(root, name);
  mkdirSync(out);
  writeFileSync(join(out, "journal.jsonl"), `${lines.slice(0, -1).join("\n")}\n`);
  return out;
}

describe("the policy address in the plan", () => {
  it("is recorded with its query-string token redacted, and --resume refuses another address (exit 2)", () => {
    const first = join(root, "first");
    const secret = `${url}?token=s3cret-value`;
    const r = attack(secret, first);
    expect(r.code, r.stderr).toBe(0);
    const journal = readFileSync(join(first, "journal.jsonl"), "utf8");
    const header = JSON.parse(journal.split("\n")[0] as string);
    expect(header.plan.policy_url).toBe(`${url}?token=[redacted]`);
    expect(journal).not.toContain("s3cret-value");

    // Another server: refused before anything is played (nothing listens there).
    const other = attack("ws://127.0.0.1:9", unfinished(first, "other"), ["--resume"]);
    expect(other.code, other.stderr).toBe(2);
    expect(other.stderr).toMatch(/another plan .*policy_url/);

    // The same server (another token: the redacted address is the same) finishes the run.
    const same = attack(`${url}?token=rotated`, unfinished(first, "same"), ["--resume"]);
    expect(same.code, same.stderr).toBe(0);
  });
});
