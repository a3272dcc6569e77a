/**
 * FFmpeg as Provael runs it (Debian's `ffmpeg` as a child process): which binary, what to say when
 * it is missing, and the input arguments for raw RGB frames piped on stdin. Dataset videos
 * (offline/lerobot) and episode clips (view) both encode this way.
 */
import {
  type ChildProcess,
  type SpawnOptions,
  type SpawnSyncOptions,
  type SpawnSyncReturns,
  spawn,
  spawnSync,
} from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

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

/** FFmpeg processes this process started and that still run. */
const live = new Set<ChildProcess>();
let exitHook = false;

/** The executable `bin` names (a path, or a name looked up on the PATH), or null. */
function resolveBinary(bin: string): string | null {
  const candidates = bin.includes("/")
    ? [bin]
    : (process.env.PATH ?? "").split(delimiter).map((d) => join(d, bin));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** The command and arguments that run `bin` so that the kernel kills it when we die (Linux). */
function guarded(bin: string, args: readonly string[]): [string, string[]] {
  const exe = resolveBinary(bin);
  const guard = process.platform === "linux" && exe !== null ? resolveBinary("setpriv") : null;
  return guard ? [guard, ["--pdeathsig", "KILL", "--", exe as string, ...args]] : [bin, [...args]];
}

/**
 * Runs FFmpeg (or ffprobe) to completion, as `spawnSync`, so that it dies with this process: a
 * process killed while it waits on a synchronous child leaves that child running otherwise (a
 * dataset's encoder, minutes of CPU). `bin` not found: `error` is set, as `spawnSync` does.
 */
export function runFfmpegSync<T extends string | Buffer = Buffer>(
  bin: string,
  args: readonly string[],
  options: SpawnSyncOptions,
): SpawnSyncReturns<T> {
  const [command, argv] = guarded(bin, args);
  return spawnSync(command, argv, options) as unknown as SpawnSyncReturns<T>;
}

/**
 * Starts FFmpeg so that it dies with this process. A Node child outlives a parent that is
 * killed; FFmpeg would go on encoding into a temporary folder nobody removes. On Linux it is
 * started through util-linux `setpriv --pdeathsig KILL`, so the kernel kills it when this
 * process dies, however it dies; everywhere, the children still running when this process exits
 * (an error, Ctrl-C) are killed on the way out. A binary that cannot be found is spawned as
 * named, so the caller's 'error' handler reports it.
 */
export function spawnFfmpeg(
  bin: string,
  args: readonly string[],
  options: SpawnOptions,
): ChildProcess {
  const [command, argv] = guarded(bin, args);
  const child = spawn(command, argv, options);
  live.add(child);
  child.once("exit", () => live.delete(child));
  child.once("error", () => live.delete(child));
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const c of live) c.kill("SIGKILL");
    });
  }
  return child;
}
