/** `provael view [DIR…]` (the viewer, or `--bundle OUT/`) and `provael video` (a clip). */
import { homedir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { ProvaelError } from "../core/errors.js";
import { loadCalibrations } from "../runner/calibration.js";
import { writeBundle } from "../view/bundle.js";
import { Catalog } from "../view/catalog.js";
import { clipRows } from "../view/frames.js";
import { startViewServer } from "../view/server.js";
import { renderClip } from "../view/video.js";

/** Where replayed frames and clips are cached (never inside a run directory). */
export function defaultCacheRoot(): string {
  if (process.env.PROVAEL_CACHE) return process.env.PROVAEL_CACHE;
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
  return join(base, "provael", "view");
}

function port(raw: string | undefined): number {
  const n = raw === undefined ? 0 : Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new ProvaelError("config/invalid", `--port must be 0..65535, got '${raw}'`, {
      hint: "0 picks a free port",
    });
  }
  return n;
}

interface ViewFlags {
  port?: string;
  host?: string;
  bundle?: string;
  cache?: string;
  calib?: string;
  maxEpisodes?: string;
  maxFrames?: string;
}

export function registerView(program: Command): void {
  program
    .command("view")
    .argument("[dirs...]", "run directories, or folders holding them", ["runs"])
    .option("--port <n>", "port to listen on (default: a free one)")
    .option("--host <host>", "address to bind (default: 127.0.0.1, this machine only)")
    .option(
      "--bundle <dir>",
      "write a static site of the runs to this directory instead of serving",
    )
    .option(
      "--cache <dir>",
      "where replayed frames and clips are cached (default: ~/.cache/provael/view)",
    )
    .option(
      "--calib <dir>",
      "calibration files of runs scored by them (needed to replay their episodes)",
    )
    .option("--max-episodes <n>", "with --bundle: episode pages per run", "200")
    .option("--max-frames <n>", "with --bundle: episodes per run whose frames are bundled", "24")
    .action(async (dirs: string[], flags: ViewFlags) => {
      const cacheRoot = flags.cache ?? defaultCacheRoot();
      const calibrations = flags.calib ? loadCalibrations(flags.calib) : {};
      if (flags.bundle) {
        const r = await writeBundle({
          dirs,
          out: flags.bundle,
          cacheRoot,
          calibrations,
          maxEpisodes: Number(flags.maxEpisodes),
          maxFrames: Number(flags.maxFrames),
        });
        process.stdout.write(
          `wrote ${join(r.out, "index.html")}: ${r.runs} run(s), ${r.episodes} episode page(s), frames of ${r.framed} episode(s) (${r.files - r.clips} PNGs), ${r.clips} showcase clip(s), ${r.compares} comparison(s)\n`,
        );
        return;
      }
      const v = await startViewServer({
        dirs,
        cacheRoot,
        calibrations,
        port: port(flags.port),
        ...(flags.host ? { host: flags.host } : {}),
      });
      const n = v.catalog.list().length;
      process.stdout.write(`provael view: ${n} run(s) at ${v.url}\n(read-only; Ctrl-C stops it)\n`);
      await new Promise<void>((done) => {
        const stop = () => {
          void v.close().then(done);
        };
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
    });
}

export function registerVideo(program: Command): void {
  program
    .command("video")
    .requiredOption("--in <dir>", "run directory")
    .requiredOption(
      "--cell <id>",
      "the episode's cell id, or any unique prefix of 9 characters or more (as `provael view` shows it)",
    )
    .requiredOption("--out <file>", "clip.mp4, clip.webm or clip.gif")
    .option("--twin", "stack the benign twin under the episode")
    .option("--fps <n>", "frames (steps) per second", "10")
    .option("--cache <dir>", "where replayed frames are cached (default: ~/.cache/provael/view)")
    .option("--calib <dir>", "calibration files the run was scored by")
    .action(
      async (flags: {
        in: string;
        cell: string;
        out: string;
        twin?: boolean;
        fps: string;
        cache?: string;
        calib?: string;
      }) => {
        const fps = Number(flags.fps);
        if (!(fps > 0 && fps <= 60))
          throw new ProvaelError("config/invalid", `--fps must be in (0, 60], got '${flags.fps}'`);
        const catalog = new Catalog([flags.in]);
        const entry = catalog
          .list()
          .find((e) => e.label === catalog.list()[0]?.label && e.root === e.dir);
        if (!entry) {
          throw new ProvaelError("run/not-found", `${flags.in} is not a run directory`, {
            hint: "pass the --out directory of `provael attack`",
          });
        }
        catalog.assertOutsideRuns(flags.cache ?? defaultCacheRoot(), "--cache");
        const src = {
          catalog,
          cacheRoot: flags.cache ?? defaultCacheRoot(),
          calibrations: flags.calib ? loadCalibrations(flags.calib) : {},
        };
        const rows = await clipRows(src, entry.id, flags.cell, Boolean(flags.twin));
        const r = await renderClip(rows, { out: flags.out, fps });
        process.stdout.write(
          `wrote ${r.out}: ${r.frames} steps at ${fps} fps, ${r.width}x${r.height}, ${(r.bytes / 1024).toFixed(0)} KiB${r.labels ? "" : " (no font found: labels left out, the unsafe border kept)"}\n`,
        );
      },
    );
}
