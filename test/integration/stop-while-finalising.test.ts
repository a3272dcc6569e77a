/**
 * SIGTERM while a finished run writes its outputs, from a caller that then stops reading: what
 * `spawnSync`'s `timeout` does (it sends SIGTERM and closes its ends of the pipes at once), and
 * what Ctrl-C on `provael attack ... | tee run.log` does (tee ends too). Every episode is played,
 * so the first signal must let the report be written; the `stopping` line it prints meets a
 * closed pipe. That write used to end the process (an uncaught EPIPE, which the TensorFlow.js
 * WASM backend's handlers turn into exit 7) half-way through the outputs: no report.html, no
 * execution manifest, the directory still locked.
 *
 * The signal comes at a fixed point of the finalisation, not after a sleep: a stand-in for FFmpeg
 * (PROVAEL_FFMPEG), run while the showcase clip is encoded (after report.json and report.md,
 * before report.html and the manifest), sends it to the CLI and declines to encode.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/digest.js";
import { LOCK_FILE } from "../../src/rundir/lock.js";
import { CLI } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

/** Two short tiny-vla episodes (one attacked, so the report showcases a pair and encodes a clip). */
const ARGS = [
  "attack",
  "--policy",
  "tiny-vla",
  "--suite",
  "tabletop",
  "--attacks",
  "none,goal_substitution",
  "--no-controls",
  "--tasks",
  "kitchen_red_block",
  "--seeds",
  "1",
  "--horizon",
  "8",
  "--workers",
  "1",
  "--json",
];

/** Runs the CLI with its stderr (and, with `closeStdout`, its stdout) closed by the reader. */
async function stoppedWhileFinalising(closeStdout: boolean) {
  const dir = tempDir();
  const ffmpeg = join(dir, "ffmpeg");
  writeFileSync(ffmpeg, "#!/bin/sh\nkill -TERM $PPID\ncat >/dev/null\nexit 1\n");
  chmodSync(ffmpeg, 0o755);
  const out = join(dir, "run");
  const child = spawn(process.execPath, [CLI, ...ARGS, "--out", out], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PROVAEL_FFMPEG: ffmpeg },
  });
  // Gone before the first write: `--json` writes nothing to stderr but the signal's line.
  child.stderr.destroy();
  if (closeStdout) child.stdout.destroy();
  let stdout = "";
  child.stdout.on("data", (d) => {
    stdout += String(d);
  });
  const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
  return { code, stdout, out };
}

/** Every output of a finished run is there, and the directory is let go. */
function expectFinished(out: string) {
  for (const f of ["report.json", "report.md", "report.html", "execution-manifest.json"])
    expect(existsSync(join(out, f)), f).toBe(true);
  expect(existsSync(join(out, LOCK_FILE))).toBe(false);
}

describe("a first SIGTERM while the report is written, its caller gone", () => {
  it("lets the run finish its outputs and exit as it would have (0)", async () => {
    const { code, stdout, out } = await stoppedWhileFinalising(false);
    expect(code, stdout).toBe(0);
    const summary = JSON.parse(stdout) as { report_digest: string; played: number };
    expect(summary.played).toBe(2);
    expect(summary.report_digest).toBe(sha256(readFileSync(join(out, "report.json"))));
    expectFinished(out);
  }, 60_000);

  it("with stdout closed too (spawnSync's timeout): the outputs are finished, then 141", async () => {
    const { code, out } = await stoppedWhileFinalising(true);
    expect(code).toBe(141);
    expectFinished(out);
  }, 60_000);
});
