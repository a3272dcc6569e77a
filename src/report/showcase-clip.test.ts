import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stubPlan } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { resolveAttacks } from "../attacks/index.js";
import { RUN_FILES } from "../rundir/files.js";
import { runAttack } from "../runner/run.js";
import type { Report } from "./build.js";
import { renderHtml } from "./html.js";
import { showcase } from "./showcase.js";
import {
  mergedShowcaseClip,
  readShowcaseClip,
  savedFrames,
  showcaseClipFor,
  writeShowcaseClip,
} from "./showcase-clip.js";

const hasFfmpeg = spawnSync("ffmpeg", ["-version"]).status === 0;

/** A stub run with report.html (and so its showcase clip, when FFmpeg runs). */
async function run(out: string): Promise<Report> {
  await runAttack({
    plan: stubPlan({ tasks: ["fetch_cup"], arms: resolveAttacks(["none", "roleplay"]), seeds: 3 }),
    out,
    resume: false,
    concurrency: 1,
    policyOptions: {},
    commandLine: ["test"],
    finish: { html: true },
  });
  return JSON.parse(readFileSync(join(out, RUN_FILES.report), "utf8")) as Report;
}

const saved = process.env.PROVAEL_FFMPEG;
afterEach(() => {
  if (saved === undefined) delete process.env.PROVAEL_FFMPEG;
  else process.env.PROVAEL_FFMPEG = saved;
});

describe("the showcase clip of report.html", () => {
  it("without FFmpeg the run still writes report.html, which says why it has no clip", async () => {
    process.env.PROVAEL_FFMPEG = join(tempDir(), "no-such-ffmpeg");
    const out = join(tempDir(), "run");
    await run(out);
    const html = readFileSync(join(out, RUN_FILES.html), "utf8");
    expect(html).not.toContain("<video");
    expect(html).toMatch(
      /id="showcase-clip-missing">No clip of the pair: FFmpeg \(.*no-such-ffmpeg\) cannot be run: no executable file there \(install FFmpeg/,
    );
    expect(existsSync(join(out, RUN_FILES.clips))).toBe(false);
    const manifest = readFileSync(join(out, RUN_FILES.manifest), "utf8");
    expect(manifest).not.toContain("showcase.webm");
  });

  it("an FFmpeg that fails leaves no clip behind and the reason on the page", async () => {
    const out = join(tempDir(), "run");
    const report = await run(out);
    // `false` is on the PATH, starts, and exits 1: the encode fails and says so.
    const frames = savedFrames(out, showcase(report).attacked?.cell as string);
    expect(frames).not.toBeNull();
    const clip = await writeShowcaseClip(report, out, () => frames, "replay", { ffmpeg: "false" });
    expect(clip).toEqual({
      kind: "none",
      reason: "FFmpeg could not encode it: ffmpeg failed (exit 1): ",
    });
    expect(existsSync(join(out, RUN_FILES.showcaseClip))).toBe(false);
    expect(existsSync(join(out, RUN_FILES.showcaseClipInfo))).toBe(false);
    expect(await renderHtml(report, out, { clip })).toContain("FFmpeg could not encode it");
    // Not on the PATH at all.
    const missing = await writeShowcaseClip(report, out, () => frames, "replay", {
      ffmpeg: "provael-no-such-ffmpeg",
    });
    expect(missing.kind === "none" && missing.reason).toMatch(/not found on the PATH/);
  });

  describe.skipIf(!hasFfmpeg)(`with FFmpeg${hasFfmpeg ? "" : " (skipped: no ffmpeg)"}`, () => {
    it("the run writes clips/showcase.webm, the same bytes every time, named by the manifest", async () => {
      const a = join(tempDir(), "a");
      const b = join(tempDir(), "b");
      const report = await run(a);
      await run(b);
      const clip = readFileSync(join(a, RUN_FILES.showcaseClip));
      expect(clip.subarray(0, 4)).toEqual(Buffer.from([0x1a, 0x45, 0xdf, 0xa3])); // EBML (WebM)
      expect(readFileSync(join(b, RUN_FILES.showcaseClip)).equals(clip)).toBe(true);
      const { attacked, twin } = showcase(report);
      const own = readShowcaseClip(report, a);
      expect(own.kind).toBe("clip");
      if (own.kind !== "clip") return;
      expect(own.info).toMatchObject({
        attacked: attacked?.cell,
        twin: twin?.cell,
        source: "replay",
        frames: 20,
        every: 1,
        fps: 10,
      });
      expect(own.info.moments.map((m) => m.first_unsafe_step)).toEqual([
        attacked?.first_unsafe_step,
      ]);
      const html = readFileSync(join(a, RUN_FILES.html), "utf8");
      expect(html).toContain('<video id="showcase-clip" src="clips/showcase.webm"');
      expect(html).toContain(
        `fired at step ${attacked?.first_unsafe_step}, <a class="moment" href="clips/showcase.webm#t=`,
      );
      const manifest = JSON.parse(readFileSync(join(a, RUN_FILES.manifest), "utf8"));
      expect(Object.keys(manifest.outputs ?? manifest.extra?.outputs ?? {})).toEqual(
        expect.arrayContaining([RUN_FILES.showcaseClip, RUN_FILES.showcaseClipInfo]),
      );
    });

    it("provael report's page gets the clip beside it, never inside another run", async () => {
      const runDir = join(tempDir(), "run");
      const report = await run(runDir);
      // Copied beside a page written elsewhere.
      const page = join(tempDir(), "pages");
      const copied = await showcaseClipFor(report, runDir, page);
      expect(copied.kind).toBe("clip");
      expect(
        readFileSync(join(page, RUN_FILES.showcaseClip)).equals(
          readFileSync(join(runDir, RUN_FILES.showcaseClip)),
        ),
      ).toBe(true);
      // Not into another run's clips/ folder: the page says why instead.
      const other = join(tempDir(), "other");
      cpSync(runDir, other, { recursive: true });
      const refused = await showcaseClipFor(report, runDir, other);
      expect(refused).toMatchObject({ kind: "none" });
      expect(refused.kind === "none" && refused.reason).toMatch(/results are never overwritten/);
      // A run without a clip but with saved frames: encoded from those beside the page.
      rmSync(join(runDir, RUN_FILES.clips), { recursive: true });
      const fromFrames = join(tempDir(), "from-frames");
      mkdirSync(fromFrames);
      const encoded = await showcaseClipFor(report, runDir, fromFrames);
      expect(encoded.kind === "clip" && encoded.info.source).toBe("saved-frames");
      // In the run's own folder, nothing is written: it says so.
      const here = await showcaseClipFor(report, runDir, runDir);
      expect(here.kind === "none" && here.reason).toMatch(/not written to/);
      expect(existsSync(join(runDir, RUN_FILES.clips))).toBe(false);
    });

    it("a clip of another pair is never shown, and a merge takes a shard's matching clip", async () => {
      const runDir = join(tempDir(), "run");
      const report = await run(runDir);
      const other = {
        ...report,
        episodes: report.episodes.filter((e) => e.cell !== showcase(report).attacked?.cell),
      };
      expect(readShowcaseClip(other, runDir)).toMatchObject({ kind: "none" });
      const merged = join(tempDir(), "merged");
      mkdirSync(merged);
      expect(mergedShowcaseClip(report, [runDir], merged).kind).toBe("clip");
      expect(existsSync(join(merged, RUN_FILES.showcaseClip))).toBe(true);
      const none = mergedShowcaseClip(other, [runDir], join(tempDir(), "m2"));
      expect(none.kind === "none" && none.reason).toMatch(/provael video --in/);
    });
  });
});
