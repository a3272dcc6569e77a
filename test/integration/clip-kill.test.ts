/**
 * A run killed while it encodes a clip leaves its temporary files inside the run directory,
 * where the next `--resume` removes them (not in $TMPDIR, where nothing did), and its FFmpeg dies
 * with it instead of encoding on as an orphan.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ffmpegMissing } from "../../src/report/clip.js";
import { removeTempFiles } from "../../src/rundir/files.js";
import { tempDir } from "../support/tmp.js";

const dist = (p: string) => pathToFileURL(join(import.meta.dirname, "..", "..", "dist", p)).href;

/** Encodes a long clip into DIR/clips/x.webm, forever as far as the test is concerned. */
const ENCODER = `
const { renderClip } = await import(process.argv[2]);
const dir = process.argv[3];
const image = { width: 64, height: 64, channels: 3, data: new Uint8Array(64 * 64 * 3).fill(90) };
const steps = Array.from({ length: 20000 }, (_, i) => i);
await renderClip(
  [{ label: "x", cameras: ["agentview"], steps, frame: () => image, firstUnsafe: null, fired: [] }],
  { out: dir + "/clips/x.webm", fps: 10 },
);
`;

/** Processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "latin1");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === pid) out.push(Number(p));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

const running = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return false;
  }
};

const wait = async (cond: () => boolean, ms: number) => {
  for (let t = 0; t < ms && !cond(); t += 20) await new Promise((r) => setTimeout(r, 20));
  return cond();
};

describe.skipIf(process.platform !== "linux" || ffmpegMissing() !== null)(
  "a kill during clip encoding",
  () => {
    it("leaves its temporary folder in the run directory (removed on resume), and no FFmpeg", async () => {
      const dir = tempDir();
      const script = join(dir, "encode.mjs");
      const { writeFileSync } = await import("node:fs");
      writeFileSync(script, ENCODER);
      const child = spawn(process.execPath, [script, dist("report/clip.js"), dir], {
        stdio: "ignore",
      });
      const pid = child.pid as number;
      let ffmpeg: number[] = [];
      expect(
        await wait(() => {
          ffmpeg = childrenOf(pid);
          return ffmpeg.length > 0;
        }, 30_000),
      ).toBe(true);
      const clips = join(dir, "clips");
      const temps = () =>
        existsSync(clips) ? readdirSync(clips).filter((f) => f.startsWith(".provael-clip-")) : [];
      expect(temps().length).toBe(1);
      await new Promise((r) => setTimeout(r, 300));
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
      // FFmpeg goes with it, at once (it is not left to encode what it was sent).
      expect(await wait(() => ffmpeg.every((p) => !running(p)), 5000)).toBe(true);
      // What it left is inside the run directory, and what --resume sweeps removes it.
      expect(temps().length).toBe(1);
      const removed = removeTempFiles(dir);
      expect(removed.some((p) => p.includes(".provael-clip-"))).toBe(true);
      expect(temps()).toEqual([]);
    }, 120_000);
  },
);
