/**
 * Clips of an episode and its benign twin, encoded by FFmpeg (a child process; Debian's
 * package). One encoder for the clip report.html embeds (written by the run) and for
 * `provael video` and the viewer's downloads, which hand it replayed frames.
 *
 * Each output frame is one step (or one of every `every` steps): the episodes stacked, every
 * camera side by side, scaled up, a step between two saved frames shown with the frame before
 * it, and a red border on an episode from the step its predicate fired. Labels, the step counter
 * and the predicate's moment are drawn by FFmpeg's drawtext when a font is found; without one the
 * clip has the borders alone and says so. The encoders run single-threaded with FFmpeg's bitexact
 * flags, so the same frames give the same bytes on the same FFmpeg build.
 */
import { spawnSync } from "node:child_process";
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { delimiter, dirname, extname, join, sep } from "node:path";
import type { Readable, Writable } from "node:stream";
import { ProvaelError } from "../core/errors.js";
import { FFMPEG_HINT, ffmpegBinary, rawRgbInputArgs, spawnFfmpeg } from "../core/ffmpeg.js";
import type { Image } from "../core/types.js";
import { CLIP_TEMP_PREFIX, writeFileAtomic } from "../rundir/files.js";

export interface ClipRow {
  /** Shown above the row ("attacked: roleplay", "benign twin: none"). */
  label: string;
  cameras: string[];
  /** Steps that have a frame, ascending. */
  steps: number[];
  /** The frame of `camera` at `step` (one of `steps`), or null when it cannot be read. */
  frame: (camera: string, step: number) => Image | null;
  /** Step from which the episode was unsafe, and the predicates that fired. */
  firstUnsafe: number | null;
  fired: string[];
}

export type ClipFormat = "mp4" | "webm" | "gif";

export interface ClipOptions {
  /** Where the clip goes (written atomically; the caller checks the path may be written). */
  out: string;
  fps?: number;
  /** Tile height in pixels (frames are scaled up by a whole factor to reach it). */
  tileHeight?: number;
  /** Show one step in `every` (1: every step). */
  every?: number;
  ffmpeg?: string;
}

export interface ClipResult {
  out: string;
  format: ClipFormat;
  frames: number;
  /** The step shown by output frame i is `i * every`. */
  every: number;
  fps: number;
  width: number;
  height: number;
  /** Whether labels were drawn (a font was found). */
  labels: boolean;
  bytes: number;
}

const FONTS = [
  "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
  "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
  "/usr/share/fonts/TTF/DejaVuSans.ttf",
  "/usr/share/fonts/dejavu/DejaVuSans.ttf",
  "/System/Library/Fonts/Supplemental/Arial.ttf",
];

/** A font file for drawtext, or null. */
export function findFont(): string | null {
  for (const f of FONTS) if (existsSync(f)) return f;
  try {
    const r = spawnSync("fc-match", ["-f", "%{file}", "sans"], { encoding: "utf8", timeout: 5000 });
    const file = r.stdout?.trim();
    if (r.status === 0 && file && existsSync(file) && /\.(ttf|otf)$/i.test(file)) return file;
  } catch {
    // No fontconfig: no labels.
  }
  return null;
}

export function clipFormat(out: string): ClipFormat {
  const ext = extname(out).toLowerCase().slice(1);
  if (ext === "mp4" || ext === "webm" || ext === "gif") return ext;
  throw new ProvaelError("config/invalid", `--out ${out}: a clip is .mp4, .webm or .gif`, {
    hint: "e.g. --out clip.mp4 (H.264), clip.webm (VP9) or clip.gif",
  });
}

/**
 * Why the FFmpeg binary cannot be run (not found, not executable), or null when it can be
 * tried. Looked up on the PATH without starting it: a run should not pay for a second FFmpeg
 * start-up; any other failure comes from the encode itself.
 */
export function ffmpegMissing(bin: string = ffmpegBinary()): string | null {
  const runnable = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  const found = bin.includes(sep)
    ? runnable(bin)
    : (process.env.PATH ?? "").split(delimiter).some((d) => d !== "" && runnable(join(d, bin)));
  if (found) return null;
  return `FFmpeg (${bin}) cannot be run: ${bin.includes(sep) ? "no executable file there" : "not found on the PATH"}`;
}

/** Two text lines above each row: its label, then the predicate's moment (and the step counter). */
const HEADER = 46;
const BORDER = 4;
const GAP = 4;
const even = (n: number) => n + (n % 2);

/** Nearest-neighbour copy of `img` scaled by `s` into `dst` at (x, y): one row built, copied s times. */
function blit(dst: Buffer, width: number, img: Image, s: number, x0: number, y0: number): void {
  const rowBytes = img.width * s * 3;
  const row = Buffer.allocUnsafe(rowBytes);
  const c = img.channels;
  for (let sy = 0; sy < img.height; sy++) {
    for (let sx = 0; sx < img.width; sx++) {
      const src = (sy * img.width + sx) * c;
      const r = img.data[src] as number;
      const g = img.data[src + (c > 1 ? 1 : 0)] as number;
      const b = img.data[src + (c > 2 ? 2 : 0)] as number;
      for (let k = 0, d = sx * s * 3; k < s; k++, d += 3) {
        row[d] = r;
        row[d + 1] = g;
        row[d + 2] = b;
      }
    }
    for (let k = 0; k < s; k++) row.copy(dst, ((y0 + sy * s + k) * width + x0) * 3);
  }
}

/** A solid rectangle: one row filled, copied to the others. */
function fill(
  dst: Buffer,
  width: number,
  x0: number,
  y0: number,
  w: number,
  h: number,
  rgb: number[],
) {
  const start = (y0 * width + x0) * 3;
  for (let x = 0; x < w; x++) {
    dst[start + x * 3] = rgb[0] as number;
    dst[start + x * 3 + 1] = rgb[1] as number;
    dst[start + x * 3 + 2] = rgb[2] as number;
  }
  for (let y = 1; y < h; y++) dst.copy(dst, ((y0 + y) * width + x0) * 3, start, start + w * 3);
}

/** Escapes a path for a filter argument (drawtext's fontfile, textfile). */
const filterPath = (p: string) =>
  p.replace(/\\/g, "\\\\").replace(/:/g, "\\:").replace(/'/g, "\\'");

/** The output frame from which a step is on screen (frame i shows step i * every). */
export const frameOfStep = (step: number, every: number) => Math.ceil(step / every);

/** The encoder arguments of each format: one thread, bitexact, no metadata that varies. */
function encoderArgs(format: ClipFormat, vf: string): string[] {
  const exact = [
    "-threads",
    "1",
    "-fflags",
    "+bitexact",
    "-flags:v",
    "+bitexact",
    "-map_metadata",
    "-1",
  ];
  if (format === "gif") {
    return [
      "-filter_complex",
      `[0:v]${vf},split[a][b];[a]palettegen=max_colors=128[p];[b][p]paletteuse=dither=bayer`,
      "-loop",
      "0",
      ...exact,
    ];
  }
  const common = ["-vf", vf, "-pix_fmt", "yuv420p", ...exact];
  if (format === "mp4")
    return [
      ...common,
      "-c:v",
      "libx264",
      "-preset",
      "veryfast",
      "-crf",
      "23",
      "-movflags",
      "+faststart",
    ];
  return [
    ...common,
    "-c:v",
    "libvpx-vp9",
    "-deadline",
    "realtime",
    "-cpu-used",
    "8",
    "-row-mt",
    "0",
    "-b:v",
    "0",
    "-crf",
    "36",
  ];
}

/** Renders the clip of one or more episodes (rows) and encodes it with FFmpeg. */
export async function renderClip(rows: ClipRow[], options: ClipOptions): Promise<ClipResult> {
  const format = clipFormat(options.out);
  if (rows.length === 0 || rows.some((r) => r.steps.length === 0 || r.cameras.length === 0)) {
    throw new ProvaelError("run/not-found", "no frames to encode", {
      hint: "the episode has no frames; see `provael view` for why",
    });
  }
  const every = Math.max(1, Math.floor(options.every ?? 1));
  const cameras = [...new Set(rows.flatMap((r) => r.cameras))].sort();
  // Decode lazily, one step at a time (a 300-step tabletop pair is 1,200 frames).
  const load = (row: ClipRow, camera: string, step: number): Image | null => {
    let held = row.steps[0] as number;
    for (const s of row.steps) if (s <= step) held = s;
    return row.cameras.includes(camera) ? row.frame(camera, held) : null;
  };
  const first = load(rows[0] as ClipRow, rows[0]?.cameras[0] as string, 0);
  if (!first) throw new ProvaelError("io/read", "the first frame of the clip cannot be read");
  const scale = Math.max(
    1,
    Math.min(Math.round((options.tileHeight ?? 192) / first.height), Math.floor(512 / first.width)),
  );
  const tileW = first.width * scale + 2 * BORDER;
  const tileH = first.height * scale + 2 * BORDER;
  const width = even(cameras.length * tileW + (cameras.length + 1) * GAP);
  const rowH = HEADER + tileH + GAP;
  const height = even(rows.length * rowH + GAP);
  const last = Math.max(...rows.map((r) => r.steps[r.steps.length - 1] as number));
  const frames = Math.floor(last / every) + 1;
  const fps = options.fps ?? 10;

  const font = findFont();
  // Beside the clip (a run's clips/ folder), never in $TMPDIR: what a killed encoding leaves is
  // inside the run directory, and the next --resume removes it (rundir/files.ts).
  mkdirSync(dirname(options.out), { recursive: true });
  const tmp = mkdtempSync(join(dirname(options.out), CLIP_TEMP_PREFIX));
  const filters: string[] = [];
  if (font) {
    const text = (name: string, body: string) => {
      const p = join(tmp, `${name}.txt`);
      writeFileSync(p, body);
      return filterPath(p);
    };
    const ff = filterPath(font);
    rows.forEach((r, i) => {
      const y = GAP + i * rowH + 6;
      filters.push(
        `drawtext=fontfile='${ff}':textfile='${text(`label${i}`, r.label)}':x=${GAP}:y=${y}:fontsize=15:fontcolor=white`,
      );
      if (r.firstUnsafe !== null) {
        const what = `UNSAFE${r.fired.length > 0 ? ` (${r.fired.join(", ")})` : ""} from step ${r.firstUnsafe}`;
        filters.push(
          `drawtext=fontfile='${ff}':textfile='${text(`unsafe${i}`, what)}':x=${GAP}:y=${y + 19}:fontsize=15:fontcolor=0xff5050:enable='gte(n\\,${frameOfStep(r.firstUnsafe, every)})'`,
        );
      }
    });
    const counter = every === 1 ? "%{frame_num}" : `%{eif\\:n*${every}\\:d}`;
    filters.push(
      `drawtext=fontfile='${ff}':text='step ${counter}':x=w-tw-${GAP}:y=${GAP + 25}:fontsize=15:fontcolor=white`,
    );
  }
  const vf = filters.length > 0 ? filters.join(",") : "null";
  const tmpOut = join(tmp, `clip.${format}`);
  const args = [...rawRgbInputArgs(width, height, fps, "-"), ...encoderArgs(format, vf), tmpOut];
  const bin = options.ffmpeg ?? ffmpegBinary();
  try {
    await new Promise<void>((resolveRun, reject) => {
      const child = spawnFfmpeg(bin, args, { stdio: ["pipe", "ignore", "pipe"] });
      // Both are pipes (stdio above).
      const stdin = child.stdin as Writable;
      const errors = child.stderr as Readable;
      let stderr = "";
      errors.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      child.on("error", (e: NodeJS.ErrnoException) =>
        reject(
          new ProvaelError("config/invalid", `cannot run ${bin}: ${e.message}`, {
            cause: e,
            hint: FFMPEG_HINT,
          }),
        ),
      );
      child.on("close", (code) =>
        code === 0
          ? resolveRun()
          : reject(
              new ProvaelError(
                "io/write",
                `ffmpeg failed (exit ${code}): ${stderr.trim().slice(0, 500)}`,
                {
                  hint: "check that your ffmpeg has libx264, libvpx-vp9 and drawtext",
                },
              ),
            ),
      );
      stdin.on("error", () => {
        // Reported by `close` with ffmpeg's own message.
      });
      const write = async () => {
        for (let f = 0; f < frames; f++) {
          const t = f * every;
          const buf = Buffer.alloc(width * height * 3, 24);
          rows.forEach((r, i) => {
            const y0 = GAP + i * rowH;
            const unsafe = r.firstUnsafe !== null && t >= r.firstUnsafe;
            cameras.forEach((camera, c) => {
              const x0 = GAP + c * (tileW + GAP);
              fill(
                buf,
                width,
                x0,
                y0 + HEADER,
                tileW,
                tileH,
                unsafe ? [220, 40, 40] : [70, 70, 70],
              );
              const img = load(r, camera, t);
              if (img) blit(buf, width, img, scale, x0 + BORDER, y0 + HEADER + BORDER);
            });
          });
          if (!stdin.write(buf)) await new Promise<void>((ok) => stdin.once("drain", () => ok()));
        }
        stdin.end();
      };
      write().catch(reject);
    });
    const bytes = readFileSync(tmpOut);
    writeFileAtomic(options.out, bytes);
    return {
      out: options.out,
      format,
      frames,
      every,
      fps,
      width,
      height,
      labels: font !== null,
      bytes: bytes.length,
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
