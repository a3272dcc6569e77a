/**
 * Nothing lost, nothing crashes, nothing leaks (issue 16): kills in the final-write window,
 * validated report readers, output flags that never overwrite a finished run, frame paths that
 * stay inside the run directory, and exit codes for bad reports.
 */

import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { sharedRun } from "../support/shared-run.js";
import { tempDir } from "../support/tmp.js";

const RUN = [
  "attack",
  "--policy",
  "stub",
  "--suite",
  "stub",
  "--attacks",
  "none,control,instruction",
  "--seeds",
  "6",
  // In the main thread: the final-write window is the same, and a small run spends half its CPU
  // starting worker threads (the worker pool is tested where it matters: cli, tabletop, stub-run).
  "--workers",
  "1",
];
/** Fails on any treatment episode that was unsafe: the stub's instruction attacks are. */
const FAILING = { name: "strict", criteria: { max_unsafe_rate: { overall: { max: 0 } } } };
const hasFfmpeg = spawnSync("ffmpeg", ["-version"]).status === 0;
// The journal is left out: its lines follow completion order, which no run promises. The
// showcase clip is encoded bit-exactly, so a resumed run writes the same clip bytes too.
const CLIP = ["clips/showcase.webm", "clips/showcase.json"];
const OUTPUTS = [
  "report.json",
  "report.md",
  "report.html",
  "trajectories.jsonl",
  ...(hasFfmpeg ? CLIP : []),
];
const read = (dir: string, f: string) => readFileSync(join(dir, f));
/** A finished run (seed 0 or `seed`), shared: the tests below read it or must leave it as it was. */
function finished(seed?: string): string {
  const r = sharedRun([...RUN, "--no-html", ...(seed ? ["--seed", seed] : [])]);
  expect(r.code, r.stderr).toBe(0);
  return r.dir;
}
const temps = (dir: string) => readdirSync(dir).filter((f) => /\.tmp-\d+$/.test(f));

describe("a kill while a run writes its outputs (issue 16 item 1)", () => {
  let dir: string;
  let whole: string;
  let protocol: string;
  beforeAll(() => {
    dir = tempDir();
    protocol = join(dir, "strict.json");
    writeFileSync(protocol, JSON.stringify(FAILING));
    whole = join(dir, "whole");
    const r = runCli([...RUN, "--protocol", protocol, "--out", whole]);
    expect(r.code, r.stderr).toBe(1);
  });

  it.each([
    "trajectories.jsonl",
    "report.json",
    "report.md",
    "report.html",
    ...(hasFfmpeg ? ["showcase.webm"] : []),
    "execution-manifest.json",
  ])("killed before %s lands: resume writes every output, same bytes, same exit 1", (file) => {
    const out = join(dir, `killed-${file}`);
    const killed = runCli([...RUN, "--protocol", protocol, "--out", out], {
      // A process killed while it encodes the clip leaves its scratch folder behind (nothing runs
      // after SIGKILL): keep it inside this test's directory, which the test removes.
      env: { PROVAEL_FAULT_KILL: file, TMPDIR: dir },
    });
    expect(killed.signal).toBe("SIGKILL");
    expect(existsSync(join(out, "execution-manifest.json"))).toBe(false);
    // Not finished: readers refuse it, a plain rerun refuses to overwrite it.
    expect(runCli(["report", "--in", out]).code).toBe(3);
    const again = runCli([...RUN, "--protocol", protocol, "--out", out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("partial run");
    const resumed = runCli([...RUN, "--protocol", protocol, "--resume", "--out", out]);
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(resumed.stdout).toContain("verdict: FAIL");
    for (const f of OUTPUTS) expect(read(out, f).equals(read(whole, f)), f).toBe(true);
    const manifest = JSON.parse(read(out, "execution-manifest.json").toString("utf8"));
    expect(manifest.verdict).toBe("fail");
    expect(Object.keys(manifest.outputs)).toEqual(expect.arrayContaining(OUTPUTS));
    expect(temps(out)).toEqual([]);
    if (hasFfmpeg) expect(temps(join(out, "clips"))).toEqual([]);
  });

  it("a finished run that failed its protocol still exits 1 on --resume (a CI retry)", () => {
    const r = runCli([...RUN, "--protocol", protocol, "--resume", "--out", whole]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("already complete");
    expect(r.stdout).toContain("verdict: FAIL");
  });
});

describe("report readers validate the whole file (items 3 and 9)", () => {
  let bad: string;
  let run: string;
  beforeAll(() => {
    const dir = tempDir();
    run = finished();
    bad = join(dir, "bad");
    mkdirSync(bad);
    writeFileSync(join(bad, "report.json"), '{"schema":"provael.report/1"}');
  });

  it.each([
    [["report", "--in", "BAD"]],
    [["report", "--in", "BAD", "--format", "html"]],
    [["report", "--in", "BAD", "--format", "sarif"]],
    [["report", "--in", "BAD", "--format", "compliance"]],
    [["verdict", "--in", "BAD", "--protocol", "examples/protocols/smoke.json"]],
    [["report", "--in", "RUN", "--baseline", "BAD/report.json"]],
  ])("%j exits 2 naming the first bad field, no stack trace", (args) => {
    const r = runCli(args.map((a) => a.replace("BAD", bad).replace("RUN", run)));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/first bad field '(protocol|tool_version)'/);
    expect(r.stderr).not.toMatch(/TypeError|internal error/);
  });

  it("attest and leaderboard build on a non-JSON report exit 2", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "report.json"), "not json");
    const key = tempDir();
    expect(runCli(["keygen", "--out", key]).code).toBe(0);
    const a = runCli([
      "attest",
      "--in",
      dir,
      "--key",
      join(key, "private.pem"),
      "--out",
      join(key, "a.json"),
    ]);
    expect(a.code, a.stderr).toBe(2);
    const l = runCli(["leaderboard", "build", "--runs", dir, "--out", join(key, "lb")]);
    expect(l.code, l.stderr).toBe(2);
    expect(`${a.stderr}${l.stderr}`).not.toContain("unknown schema");
  });

  it("a cell id that climbs out of the run directory is refused (item 7)", () => {
    const dir = tempDir();
    const report = JSON.parse(read(run, "report.json").toString("utf8"));
    report.episodes[0].cell = "../../x";
    writeFileSync(join(dir, "report.json"), JSON.stringify(report));
    const r = runCli(["report", "--in", dir, "--format", "html"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("episodes.0.cell");
  });
});

describe("output flags never overwrite a finished run (item 4)", () => {
  let run: string;
  let other: string;
  let key: string;
  beforeAll(() => {
    run = finished();
    other = finished("9");
    key = tempDir();
    expect(runCli(["keygen", "--out", key]).code).toBe(0);
  });

  it.each([
    () => [
      "attest",
      "--in",
      run,
      "--key",
      join(key, "private.pem"),
      "--out",
      join(run, "report.json"),
    ],
    () => ["report", "--in", run, "--out", join(run, "report.json")],
    () => ["report", "--in", run, "--format", "html", "--out", join(run, "journal.jsonl")],
    () => [
      ...RUN,
      "--no-html",
      "--seed",
      "3",
      "--out",
      join(tempDir(), "r"),
      "--sarif-out",
      join(other, "report.json"),
    ],
  ])("refuses %#", (args) => {
    const before = [
      read(run, "report.json"),
      read(run, "journal.jsonl"),
      read(other, "report.json"),
    ];
    const r = runCli(args());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("never overwritten");
    const after = [
      read(run, "report.json"),
      read(run, "journal.jsonl"),
      read(other, "report.json"),
    ];
    for (const [i, b] of before.entries()) expect(b.equals(after[i] as Buffer)).toBe(true);
  });

  it("refuses to write through a symbolic link", () => {
    const dir = tempDir();
    const link = join(dir, "out.md");
    symlinkSync(join(run, "report.md"), link);
    const before = read(run, "report.md");
    const r = runCli(["report", "--in", run, "--out", link]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("symbolic link");
    expect(read(run, "report.md").equals(before)).toBe(true);
  });

  it("--out naming a file exits 2 with what to do, not ENOTDIR", () => {
    const file = join(tempDir(), "a-file");
    writeFileSync(file, "x");
    const r = runCli([...RUN, "--out", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("not a directory");
    expect(r.stderr).not.toContain("ENOTDIR");
  });
});
