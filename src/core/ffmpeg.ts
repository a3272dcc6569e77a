/**
 * FFmpeg as Provael runs it (Debian's `ffmpeg` as a child process): which binary, what to say when
 * it is missing, and the input arguments for raw RGB frames piped on stdin. Dataset videos
 * (offline/lerobot) and episode clips (view) both encode this way.
 */

/** The FFmpeg binary: `PROVAEL_FFMPEG` when set, else `ffmpeg` on the PATH. */
export function ffmpegBinary(): string {
  return process.env.PROVAEL_FFMPEG || "ffmpeg";
}

export const FFMPEG_HINT = "install FFmpeg (Debian: apt-get install ffmpeg) or set PROVAEL_FFMPEG";

/** Quiet, overwriting, and reading `width`x`height` rgb24 frames at `fps` from `input`. */
export function rawRgbInputArgs(
  width: number,
  height: number,
  fps: number,
  input: string,
): string[] {
  return [
    "-hide_banner",
    "-loglevel",
    "error",
    "-y",
    "-f",
    "rawvideo",
    "-pix_fmt",
    "rgb24",
    "-s",
    `${width}x${height}`,
    "-r",
    String(fps),
    "-i",
    input,
  ];
}
