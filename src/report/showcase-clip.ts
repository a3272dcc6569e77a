/**
 * The clip report.html embeds: its showcased attacked episode stacked over its benign twin,
 * `clips/showcase.webm` (VP9, which Chromium and Firefox play) beside the page, with
 * `clips/showcase.json` saying which pair it shows and where the predicate fired. The run writes
 * it from the replay that saves the page's frames (every step); `provael report` copies the
 * run's clip beside the page it writes, or encodes one from the frames the run saved. When
 * FFmpeg is missing or fails, nothing fails: the page says why it has no clip.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { canonicalJson } from "../core/canonical-json.js";
import { sha256 } from "../core/digest.js";
import { FFMPEG_HINT } from "../core/ffmpeg.js";
import { decodePng } from "../core/png.js";
import type { Image } from "../core/types.js";
import { checkOutputFile, framesDir, RUN_FILES, writeFileAtomic } from "../rundir/files.js";
import {
  FRAME_FILE,
  SHOWCASE_CLIP_FORMAT,
  type ShowcaseClipFile,
  showcaseClipSchema,
} from "../rundir/schema/index.js";
import type { Report, ReportEpisode } from "./build.js";
import { type ClipRow, ffmpegMissing, frameOfStep, renderClip } from "./clip.js";
import { showcase } from "./showcase.js";

/** The clip stays short: at most this many output frames (one step in `every`). */
export const SHOWCASE_MAX_FRAMES = 120;
const SHOWCASE_FPS = 10;
/** Tiles about 256 px high: 128-px tabletop frames doubled, so the labels fit above two cameras. */
const SHOWCASE_TILE = 256;

/** What report.html shows in its clip section. */
export type ShowcaseClip =
  | { kind: "clip"; info: ShowcaseClipFile; href: string }
  | { kind: "none"; reason: string };

/** The frames of one episode as a writer has them. */
export interface EpisodeFrames {
  cameras: string[];
  /** Steps with a frame of every camera, ascending. */
  steps: number[];
  /** The frames were kept at one step in `every` (the clip then shows no step in between). */
  every?: number;
  frame: (camera: string, step: number) => Image | null;
}

/** One step in `every` keeps the clip at most SHOWCASE_MAX_FRAMES frames long. */
export const showcaseEvery = (steps: number) => Math.max(1, Math.ceil(steps / SHOWCASE_MAX_FRAMES));

const firedOf = (e: ReportEpisode) =>
  Object.entries(e.endpoints)
    .filter(([, ep]) => ep.unsafe)
    .map(([p]) => p)
    .sort();

/** Short enough for the clip's width; the page's caption names the task. */
const labelOf = (e: ReportEpisode, role: string) =>
  `${role}: ${e.arm} · seed ${e.seed}${e.unsafe ? " · unsafe" : e.unsafe === false ? " · safe" : ""}`;

/** Removes a clip an earlier attempt left, so the folder never holds one the page does not show. */
function removeClip(dir: string): void {
  rmSync(join(dir, RUN_FILES.showcaseClip), { force: true });
  rmSync(join(dir, RUN_FILES.showcaseClipInfo), { force: true });
}

/**
 * Encodes the showcase clip into `dir/clips/` from the frames `framesOf` hands over (the run's
 * replay, or the frames it saved), and says what the page should show.
 */
export async function writeShowcaseClip(
  report: Report,
  dir: string,
  framesOf: (cell: string) => EpisodeFrames | null,
  source: ShowcaseClipFile["source"],
  options: { ffmpeg?: string } = {},
): Promise<ShowcaseClip> {
  removeClip(dir);
  const { attacked, twin } = showcase(report);
  if (attacked === null)
    return { kind: "none", reason: "this run has no attacked episode to show" };
  const missing = ffmpegMissing(options.ffmpeg);
  if (missing !== null) return { kind: "none", reason: `${missing} (${FFMPEG_HINT})` };
  const episodes = [attacked, ...(twin ? [twin] : [])];
  const rows: ClipRow[] = [];
  let kept = 1;
  for (const [i, e] of episodes.entries()) {
    const frames = framesOf(e.cell);
    if (!frames || frames.steps.length === 0 || frames.cameras.length === 0) {
      return {
        kind: "none",
        reason: `no camera frames of the ${i === 0 ? "attacked episode" : "benign twin"} (${e.cell}) to encode`,
      };
    }
    kept = Math.max(kept, frames.every ?? 1);
    rows.push({
      label: labelOf(e, i === 0 ? "attacked" : "benign twin"),
      cameras: frames.cameras,
      steps: frames.steps,
      frame: frames.frame,
      firstUnsafe: e.first_unsafe_step,
      fired: firedOf(e),
    });
  }
  const last = Math.max(...rows.map((r) => r.steps[r.steps.length - 1] as number));
  const every = Math.max(showcaseEvery(last + 1), kept);
  const out = join(dir, RUN_FILES.showcaseClip);
  mkdirSync(dirname(out), { recursive: true });
  try {
    const r = await renderClip(rows, {
      out,
      fps: SHOWCASE_FPS,
      every,
      tileHeight: SHOWCASE_TILE,
      ...(options.ffmpeg ? { ffmpeg: options.ffmpeg } : {}),
    });
    const info: ShowcaseClipFile = {
      format: SHOWCASE_CLIP_FORMAT,
      video: "showcase.webm",
      attacked: attacked.cell,
      twin: twin?.cell ?? null,
      source,
      fps: r.fps,
      every: r.every,
      frames: r.frames,
      width: r.width,
      height: r.height,
      labels: r.labels,
      moments: episodes.flatMap((e) =>
        e.first_unsafe_step === null
          ? []
          : [
              {
                cell: e.cell,
                first_unsafe_step: e.first_unsafe_step,
                seconds: frameOfStep(e.first_unsafe_step, r.every) / r.fps,
                fired: firedOf(e),
              },
            ],
      ),
      sha256: sha256(readFileSync(out)),
    };
    writeFileAtomic(join(dir, RUN_FILES.showcaseClipInfo), `${canonicalJson(info)}\n`);
    return { kind: "clip", info, href: RUN_FILES.showcaseClip };
  } catch (e) {
    removeClip(dir);
    return { kind: "none", reason: `FFmpeg could not encode it: ${(e as Error).message}` };
  }
}

/**
 * The clip already in `runDir` when it shows this report's showcased pair and its bytes are the
 * ones its info file names; else why not.
 */
export function readShowcaseClip(report: Report, runDir: string): ShowcaseClip {
  const infoPath = join(runDir, RUN_FILES.showcaseClipInfo);
  const video = join(runDir, RUN_FILES.showcaseClip);
  if (!existsSync(infoPath) || !existsSync(video))
    return { kind: "none", reason: `the run directory has no ${RUN_FILES.showcaseClip}` };
  let info: ShowcaseClipFile;
  try {
    const parsed = showcaseClipSchema.safeParse(JSON.parse(readFileSync(infoPath, "utf8")));
    if (!parsed.success)
      return { kind: "none", reason: `${RUN_FILES.showcaseClipInfo} does not read as one` };
    info = parsed.data;
  } catch {
    return { kind: "none", reason: `${RUN_FILES.showcaseClipInfo} is not JSON` };
  }
  const { attacked, twin } = showcase(report);
  if (info.attacked !== attacked?.cell || info.twin !== (twin?.cell ?? null))
    return {
      kind: "none",
      reason: `${RUN_FILES.showcaseClip} shows another pair than this report`,
    };
  if (sha256(readFileSync(video)) !== info.sha256)
    return { kind: "none", reason: `${RUN_FILES.showcaseClip} does not match its info file` };
  return { kind: "clip", info, href: RUN_FILES.showcaseClip };
}

/** The frames a run saved of one episode (`frames/<cell>/<camera>-<step>.png`). */
export function savedFrames(runDir: string, cell: string): EpisodeFrames | null {
  const dir = framesDir(runDir, cell);
  if (!existsSync(dir)) return null;
  const byCamera = new Map<string, Set<number>>();
  for (const name of readFileNames(dir)) {
    const m = FRAME_FILE.exec(name);
    if (!m) continue;
    const set = byCamera.get(m[1] as string) ?? new Set<number>();
    set.add(Number(m[2]));
    byCamera.set(m[1] as string, set);
  }
  if (byCamera.size === 0) return null;
  const cameras = [...byCamera.keys()].sort();
  const steps = [...(byCamera.get(cameras[0] as string) as Set<number>)]
    .filter((s) => cameras.every((c) => byCamera.get(c)?.has(s)))
    .sort((a, b) => a - b);
  return {
    cameras,
    steps,
    frame: (camera, step) => {
      try {
        return decodePng(readFileSync(join(dir, `${camera}-${String(step).padStart(4, "0")}.png`)));
      } catch {
        return null;
      }
    },
  };
}

function readFileNames(dir: string): string[] {
  // Regular files only: a link in a run's frames folder is not followed.
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => d.name)
    .sort();
}

/**
 * The clip for a page written to `pageDir` from the run in `runDir` (`provael report`): the
 * run's own clip, copied beside the page when the page is elsewhere; else one encoded there from
 * the frames the run saved; else why there is none.
 */
export async function showcaseClipFor(
  report: Report,
  runDir: string,
  pageDir: string,
): Promise<ShowcaseClip> {
  const own = readShowcaseClip(report, runDir);
  const here = existsSync(pageDir) && sameDir(pageDir, runDir);
  if (!here) {
    // Never into another run's clips/ (results are never overwritten): the page says so instead.
    try {
      checkOutputFile(join(pageDir, RUN_FILES.showcaseClip), "the clip beside --out");
      checkOutputFile(join(pageDir, RUN_FILES.showcaseClipInfo), "the clip beside --out");
    } catch (e) {
      return { kind: "none", reason: (e as Error).message };
    }
  }
  if (own.kind === "clip") {
    if (!here) copyClip(runDir, own.info, pageDir);
    return own;
  }
  if (existsSync(join(runDir, RUN_FILES.frames))) {
    if (here)
      return {
        kind: "none",
        reason: `${own.reason}, and a finished run's folder is not written to; write the page elsewhere (--out DIR/page.html) to encode one from its saved frames`,
      };
    return writeShowcaseClip(report, pageDir, (cell) => savedFrames(runDir, cell), "saved-frames");
  }
  return {
    kind: "none",
    reason: `${own.reason} and no frames/ of its showcased pair (a merged or bridged run replays no episode; \`provael video --in DIR --cell CELL --twin --out pair.webm\` renders one)`,
  };
}

function sameDir(a: string, b: string): boolean {
  return realpathSync(a) === realpathSync(b);
}

/** Copies a clip and its info file (already checked by `readShowcaseClip`) into `dir/clips/`. */
function copyClip(from: string, info: ShowcaseClipFile, dir: string): void {
  mkdirSync(join(dir, RUN_FILES.clips), { recursive: true });
  removeClip(dir);
  copyFileSync(join(from, RUN_FILES.showcaseClip), join(dir, RUN_FILES.showcaseClip));
  writeFileAtomic(join(dir, RUN_FILES.showcaseClipInfo), `${canonicalJson(info)}\n`);
}

/**
 * The clip of a merged run (`provael merge`): a merge replays nothing, so it takes the clip of
 * the shard whose showcased pair is the merged report's, when one has it; else says why not.
 */
export function mergedShowcaseClip(
  report: Report,
  shards: string[],
  dir: string,
  /** The directory as the page names it, when `dir` is where it is written before a rename. */
  shownAs = dir,
): ShowcaseClip {
  for (const shard of shards) {
    const own = readShowcaseClip(report, shard);
    if (own.kind !== "clip") continue;
    copyClip(shard, own.info, dir);
    return own;
  }
  const { attacked } = showcase(report);
  return {
    kind: "none",
    reason: `a merge replays no episode and no shard has a clip of the merged report's showcased pair; \`provael video --in ${shownAs} --cell ${attacked?.cell ?? "CELL"} --twin --out pair.webm\` renders one`,
  };
}
