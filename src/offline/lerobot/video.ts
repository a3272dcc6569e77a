/**
 * Camera streams as video, through a real decoder: FFmpeg run as a child process (Debian's
 * `ffmpeg`, which decodes AV1, H.264 and the rest LeRobot datasets use). Nothing here parses a
 * container or a codec itself. `PROVAEL_FFMPEG` names another binary. Every FFmpeg and ffprobe
 * is started through core/ffmpeg.ts, so it dies with this process.
 */
import { ProvaelError } from "../../core/errors.js";
import {
  ffmpegBinary,
  FFMPEG_HINT as HINT,
  rawRgbInputArgs,
  runFfmpegSync,
  spawnFfmpeg,
} from "../../core/ffmpeg.js";
import type { Image } from "../../core/types.js";

export { ffmpegBinary };

export interface EncodeOptions {
  fps: number;
  /** `h264` (libx264, the default) or `av1` (libsvtav1, LeRobot's default). */
  codec?: "h264" | "av1";
  /** Constant rate factor: lower is closer to the source (default 10 for h264, 20 for av1). */
  crf?: number;
  /** Keyframe interval in frames (LeRobot uses 2, so a frame decodes after at most one other). */
  gop?: number;
}

/** Codec name as `info.json` records it, FFmpeg encoder, default crf. */
const CODECS = {
  h264: { encoder: "libx264", crf: 10 },
  av1: { encoder: "libsvtav1", crf: 20 },
} as const;

/** Encodes RGB frames (all one size) to an mp4 file at `path`. */
export function encodeVideo(path: string, frames: readonly Image[], options: EncodeOptions): void {
  const first = frames[0];
  if (!first) throw new ProvaelError("internal/invariant", "a video needs at least one frame");
  const { width, height } = first;
  if (width % 2 !== 0 || height % 2 !== 0) {
    throw new ProvaelError(
      "config/invalid",
      `video needs even image sizes (yuv420p), got ${width}x${height}`,
      { hint: "record with images stored as PNG (no --video), or an even image size" },
    );
  }
  const input = Buffer.alloc(width * height * 3 * frames.length);
  frames.forEach((f, i) => {
    if (f.width !== width || f.height !== height || f.channels !== 3) {
      throw new ProvaelError("internal/invariant", "video frames differ in size", {
        details: { index: i, width: f.width, height: f.height },
      });
    }
    input.set(f.data, i * width * height * 3);
  });
  const codec = CODECS[options.codec ?? "h264"];
  const args = [
    ...rawRgbInputArgs(width, height, options.fps, "pipe:0"),
    "-c:v",
    codec.encoder,
    "-crf",
    String(options.crf ?? codec.crf),
    "-g",
    String(options.gop ?? 2),
    "-pix_fmt",
    "yuv420p",
    ...(codec.encoder === "libx264" ? ["-preset", "medium", "-threads", "1"] : []),
    "-movflags",
    "+faststart",
    "-f",
    "mp4",
    path,
  ];
  const r = runFfmpegSync(ffmpegBinary(), args, { input, maxBuffer: 16 * 1024 * 1024 });
  if (r.error || r.status !== 0) {
    throw new ProvaelError("io/write", `ffmpeg could not encode ${path}`, {
      details: { stderr: String(r.stderr ?? "").slice(-2000), error: r.error?.message },
      hint: HINT,
    });
  }
}

export interface DecodeRequest {
  /** Seconds from the start of the file to frame offset 0. */
  fromTimestamp: number;
  fps: number;
  width: number;
  height: number;
  /** Frame offsets (from `fromTimestamp`) to return, any order. */
  offsets: readonly number[];
}

/**
 * Decodes the frames at `offsets` of a video file: one FFmpeg process seeks to the first,
 * decodes up to the last and the frames in between are dropped as they stream past.
 */
export async function decodeFrames(path: string, req: DecodeRequest): Promise<Map<number, Image>> {
  const wanted = new Set(req.offsets);
  const out = new Map<number, Image>();
  if (wanted.size === 0) return out;
  const lo = Math.min(...wanted);
  const hi = Math.max(...wanted);
  // Seek half a frame early: frames whose time is at or after the seek point come out, so the
  // first one out is frame `lo` whatever the rounding of the container's time base.
  const seek = Math.max(0, req.fromTimestamp + (lo - 0.5) / req.fps);
  const args = [
    "-hide_banner",
    "-loglevel",
    "error",
    "-ss",
    seek.toFixed(6),
    "-i",
    path,
    "-frames:v",
    String(hi - lo + 1),
    "-fps_mode",
    "passthrough",
    "-f",
    "rawvideo",
    "-pix_fmt",
    "rgb24",
    "pipe:1",
  ];
  const size = req.width * req.height * 3;
  const child = spawnFfmpeg(ffmpegBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  let pending: Buffer<ArrayBufferLike> = Buffer.alloc(0);
  let next = lo;
  let stderr = "";
  // Both piped (stdio above).
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= size) {
      if (wanted.has(next)) {
        const data = new Uint8Array(size);
        data.set(pending.subarray(0, size));
        out.set(next, { width: req.width, height: req.height, channels: 3, data });
      }
      pending = pending.subarray(size);
      next++;
    }
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on("error", (e) =>
      reject(
        new ProvaelError("io/read", `cannot run ffmpeg to decode ${path}: ${e.message}`, {
          cause: e,
          hint: HINT,
        }),
      ),
    );
    child.on("close", resolve);
  });
  if (code !== 0) {
    throw new ProvaelError("io/read", `ffmpeg could not decode ${path}`, {
      details: { stderr, code },
      hint: "is the file a complete video? (ffprobe FILE)",
    });
  }
  if (out.size !== wanted.size || pending.length !== 0) {
    throw new ProvaelError(
      "io/malformed",
      `${path} gave ${out.size} of the ${wanted.size} frames asked for (offsets ${lo}..${hi} from ${req.fromTimestamp}s), or frames of another size than ${req.width}x${req.height}`,
      {
        hint: "the video is shorter than the episodes table says, or its size differs from info.json",
      },
    );
  }
  return out;
}

/** Width, height and codec of a video's first stream, by ffprobe (beside ffmpeg). */
export function probeVideo(path: string): { width: number; height: number; codec: string } | null {
  const bin = ffmpegBinary().replace(/ffmpeg$/, "ffprobe");
  const r = runFfmpegSync<string>(
    bin,
    [
      "-v",
      "error",
      "-select_streams",
      "v:0",
      "-show_entries",
      "stream=width,height,codec_name",
      "-of",
      "json",
      path,
    ],
    { encoding: "utf8" },
  );
  if (r.status !== 0) return null;
  try {
    const s = JSON.parse(r.stdout).streams?.[0];
    return s
      ? { width: Number(s.width), height: Number(s.height), codec: String(s.codec_name) }
      : null;
  } catch {
    return null;
  }
}
