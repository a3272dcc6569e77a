/**
 * Clips of an episode and its benign twin, encoded by ffmpeg (a child process; Debian's
 * package). Each output frame is one step: the episodes stacked, every camera side by side,
 * composed here from the replayed frames (scaled up, held at an episode's last step), a red
 * border on an episode from the step its predicate fired. Labels, the step counter and the
 * predicate's moment are drawn by ffmpeg's drawtext when a font is found; without one the clip
 * has the borders alone and says so.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { FFMPEG_HINT, ffmpegBinary, rawRgbInputArgs } from "../core/ffmpeg.js";
import { decodePng } from "../core/png.js";
import type { Image } from "../core/types.js";
import { checkOutputFile, writeFileAtomic } from "../rundir/files.js";
import { type FramesIndex, frameName } from "../rundir/schema/index.js";

export interface ClipRow {
  /** Shown above the row ("attacked: roleplay", "benign twin: none"). */
  label: string;
  index: FramesIndex;
  /** The file of one frame of this episode. */
  file: (name: string) => string;
  /** Step from which the episode was unsafe, and the predicates that fired. */
  firstUnsafe: number | null;
  fired: string[];
}

export type ClipFormat = "mp4" | "webm" | "gif";

export interface ClipOptions {
  out: string;
  fps?: number;
  /** Tile height in pixels (frames are scaled up by a whole factor to reach it). */
  tileHeight?: number;
  ffmpeg?: string;
}

export interface ClipResult {
  out: string;
  format: ClipFormat;
  frames: number;
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

/** Two text lines above each row: its label, then the predicate's moment (and the step counter). */
const HEADER = 46;
const BORDER = 4;
const GAP = 4;
const even = (n: number) => n + (n % 2);

/** Nearest-neighbour copy of `img` scaled by `s` into `dst` at (x, y). */
function blit(dst: Buffer, width: number, img: Image, s: number, x0: number, y0: number): void {
  for (let y = 0; y < img.height * s; y++) {
    const sy = Math.floor(y / s);
    const row = (y0 + y) * width;
    for (let x = 0; x < img.width * s; x++) {
      const sx = Math.floor(x / s);
      const src = (sy * img.width + sx) * img.channels;
      const d = (row + x0 + x) * 3;
      dst[d] = img.data[src] as number;
      dst[d + 1] = img.data[src + (img.channels > 1 ? 1 : 0)] as number;
      dst[d + 2] = img.data[src + (img.channels > 2 ? 2 : 0)] as number;
    }
  }
}

function fill(
  dst: Buffer,
  width: number,
  x0: number,
  y0: number,
  w: number,
  h: number,
  rgb: number[],
) {
  for (let y = y0; y < y0 + h; y++)
    for (let x = x0; x < x0 + w; x++) {
      const d = (y * width + x) * 3;
      dst[d] = rgb[0] as number;
      dst[d + 1] = rgb[1] as number;
      dst[d + 2] = rgb[2] as number;
    }
}

/** Escapes a path for a filter argument (drawtext's fontfile, textfile). */
const filterPath = (p: string) =>
  p.replace(/\\/g, "\\\\").replace(/:/g, "\\:").replace(/'/g, "\\'");

/** Renders the clip of one or more episodes (rows) and encodes it with ffmpeg. */
export async function renderClip(rows: ClipRow[], options: ClipOptions): Promise<ClipResult> {
  const format = clipFormat(options.out);
  checkOutputFile(options.out, "--out");
  if (rows.length === 0 || rows.some((r) => r.index.steps.length === 0)) {
    throw new ProvaelError("run/not-found", "no frames to encode", {
      hint: "the episode has no replayed frames; see `provael view` for why",
    });
  }
  const cameras = [...new Set(rows.flatMap((r) => r.index.cameras))].sort();
  // Decode lazily, one step at a time (a 300-step tabletop pair is 1,200 frames).
  const load = (row: ClipRow, camera: string, step: number): Image | null => {
    const steps = row.index.steps;
    let held = steps[0] as number;
    for (const s of steps) if (s <= step) held = s;
    try {
      return decodePng(readFileSync(row.file(frameName(camera, held))));
    } catch {
      return null;
    }
  };
  const first = load(rows[0] as ClipRow, cameras[0] as string, 0);
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
  const last = Math.max(...rows.map((r) => r.index.steps[r.index.steps.length - 1] as number));
  const frames = last + 1;
  const fps = options.fps ?? 10;

  const font = findFont();
  const tmp = mkdtempSync(join(tmpdir(), "provael-clip-"));
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
          `drawtext=fontfile='${ff}':textfile='${text(`unsafe${i}`, what)}':x=${GAP}:y=${y + 19}:fontsize=15:fontcolor=0xff5050:enable='gte(n\\,${r.firstUnsafe})'`,
        );
      }
    });
    filters.push(
      `drawtext=fontfile='${ff}':text='step %{frame_num}':x=w-tw-${GAP}:y=${GAP + 25}:fontsize=15:fontcolor=white`,
    );
  }
  const vf = filters.length > 0 ? filters.join(",") : "null";
  const args = rawRgbInputArgs(width, height, fps, "-");
  if (format === "gif") {
    args.push(
      "-filter_complex",
      `[0:v]${vf},split[a][b];[a]palettegen=max_colors=128[p];[b][p]paletteuse=dither=bayer`,
      "-loop",
      "0",
    );
  } else {
    args.push("-vf", vf, "-pix_fmt", "yuv420p");
    if (format === "mp4")
      args.push("-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-movflags", "+faststart");
    else
      args.push(
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
        "-b:v",
        "0",
        "-crf",
        "36",
      );
  }
  const tmpOut = join(tmp, `clip.${format}`);
  args.push(tmpOut);
  const bin = options.ffmpeg ?? ffmpegBinary();
  try {
    await new Promise<void>((resolveRun, reject) => {
      const child = spawn(bin, args, { stdio: ["pipe", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => {
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
      child.stdin.on("error", () => {
        // Reported by `close` with ffmpeg's own message.
      });
      const write = async () => {
        for (let t = 0; t < frames; t++) {
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
          if (!child.stdin.write(buf))
            await new Promise<void>((ok) => child.stdin.once("drain", () => ok()));
        }
        child.stdin.end();
      };
      write().catch(reject);
    });
    const bytes = readFileSync(tmpOut);
    writeFileAtomic(options.out, bytes);
    return {
      out: options.out,
      format,
      frames,
      width,
      height,
      labels: font !== null,
      bytes: bytes.length,
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
