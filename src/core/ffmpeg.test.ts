import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ffmpegBinary, runFfmpegSync } from "./ffmpeg.js";

const SRC = join(import.meta.dirname, "..");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? sources(join(dir, d.name))
      : d.name.endsWith(".ts") && !d.name.endsWith(".test.ts")
        ? [join(dir, d.name)]
        : [],
  );
}

describe("FFmpeg processes", () => {
  it("start through core/ffmpeg.ts only, so each dies with the process (dataset videos included)", () => {
    const outside = sources(SRC)
      .filter((f) => !f.endsWith(join("core", "ffmpeg.ts")))
      .filter((f) => {
        // A child_process call whose command is FFmpeg's binary (or a variable holding it).
        const text = readFileSync(f, "utf8");
        return /\b(spawn|spawnSync|execFile|execFileSync)\(\s*(ffmpegBinary\(\)|bin\b|"ffmpeg"|"ffprobe")/.test(
          text,
        );
      })
      .map((f) => relative(SRC, f));
    expect(outside).toEqual([]);
  });

  it("runs to completion synchronously, and says when the binary is missing", () => {
    const r = runFfmpegSync<string>(ffmpegBinary(), ["-hide_banner", "-version"], {
      encoding: "utf8",
    });
    if (r.error) expect((r.error as NodeJS.ErrnoException).code).toBe("ENOENT");
    else expect(r.stdout).toMatch(/ffmpeg version/);
    const missing = runFfmpegSync("/nonexistent/ffmpeg", ["-version"], {});
    expect((missing.error as NodeJS.ErrnoException | undefined)?.code).toBe("ENOENT");
  });
});
