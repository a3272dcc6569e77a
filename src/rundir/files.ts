/**
 * The run directory's file names, and the rules for writing into it: every file is written to a
 * temporary name and renamed (a kill never leaves half a file), temporary files of a killed
 * writer are removed before the directory is used again, and every path derived from a report
 * (cell ids name frame folders) must resolve inside the directory.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { CELL_ID, RUN_FILES } from "./names.js";

export { CELL_ID, RUN_FILES };

/** Files a run writes itself; no output flag may write over one of them in a run directory. */
const OWN_FILES = new Set<string>([
  RUN_FILES.journal,
  RUN_FILES.report,
  RUN_FILES.markdown,
  RUN_FILES.html,
  RUN_FILES.trajectories,
  RUN_FILES.manifest,
  RUN_FILES.refusals,
]);

const TEMP = /\.tmp-\d+$/;

/** The folder a clip is encoded in, beside the clip (src/report/clip.ts), until it is renamed. */
export const CLIP_TEMP_PREFIX = ".provael-clip-";

/** The temporary name a file is written under before it is renamed into place. */
export const tempName = (path: string) => `${path}.tmp-${process.pid}`;

/** Writes a file atomically (temp file, fsync, rename), so a crash never leaves half a file. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = tempName(path);
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, typeof data === "string" ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  faultPoint(path);
  renameSync(tmp, path);
}

/**
 * Fault injection for the crash tests: with `PROVAEL_FAULT_KILL=<file name>` the process kills
 * itself (SIGKILL, no cleanup) right before that file is renamed into place, leaving its
 * temporary file behind, as a power cut at that moment would.
 */
export function faultPoint(path: string): void {
  const name = process.env.PROVAEL_FAULT_KILL;
  if (name && basename(path) === name) process.kill(process.pid, "SIGKILL");
}

/**
 * Removes temporary files a killed writer left in a run directory (and its frames and clips
 * folders), and the folders of clip encodings it left.
 */
export function removeTempFiles(dir: string): string[] {
  const removed: string[] = [];
  const sweep = (d: string, depth: number) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isFile() && TEMP.test(e.name)) {
        rmSync(p, { force: true });
        removed.push(p);
      } else if (e.isDirectory() && e.name.startsWith(CLIP_TEMP_PREFIX)) {
        rmSync(p, { recursive: true, force: true });
        removed.push(p);
      } else if (e.isDirectory() && depth > 0) sweep(p, depth - 1);
    }
  };
  sweep(dir, 2);
  return removed;
}

/** Is `child` (an absolute, resolved path) `parent` itself or inside it? */
function within(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * The folder of one episode's frames, `DIR/frames/<cell>`. The cell id comes from a report, which
 * may have been edited: an id that is not a cell id, or a folder that resolves (through links)
 * outside the run directory, is refused.
 */
export function framesDir(runDir: string, cell: string): string {
  if (!CELL_ID.test(cell)) {
    throw new ProvaelError("io/malformed", `'${cell.slice(0, 80)}' is not a cell id`, {
      details: { cell: cell.slice(0, 80) },
      hint: "cell ids are 'c' and 20 hex digits; the report was edited or damaged",
    });
  }
  const dir = join(runDir, RUN_FILES.frames, cell);
  assertInside(runDir, dir);
  return dir;
}

/** Refuses a path that resolves (symbolic links followed) outside `root`. */
export function assertInside(root: string, path: string): void {
  const base = existsSync(root) ? realpathSync(root) : resolve(root);
  let real = resolve(path);
  try {
    real = realpathSync(path);
  } catch {
    // A path not yet created: judge its nearest existing parent.
    let p = resolve(path);
    while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
    real = join(realpathSync(p), relative(p, resolve(path)));
  }
  if (!within(base, real)) {
    throw new ProvaelError("io/malformed", `${path} resolves outside the run directory ${root}`, {
      details: { path, root },
      hint: "a report or a link in the run directory points elsewhere; it was edited or damaged",
    });
  }
}

const isRunDir = (dir: string) =>
  existsSync(join(dir, RUN_FILES.journal)) || existsSync(join(dir, RUN_FILES.report));

/**
 * Checks a file that an output flag (`--out`, `--sarif-out`) is about to write: never a symbolic
 * link (the write would land wherever it points), never a directory, and never one of a run's own
 * files (`report.json`, `journal.jsonl`, …) or anything under its `frames/` or `clips/`.
 */
export function checkOutputFile(path: string, flag: string): void {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) {
    throw new ProvaelError(
      "io/write",
      `${flag} ${path} is a symbolic link; refusing to write through it`,
      {
        details: { path },
        hint: `pass ${flag} a regular file path (remove the link first if you mean to replace it)`,
      },
    );
  }
  if (st?.isDirectory()) {
    throw new ProvaelError("io/write", `${flag} ${path} is a directory, not a file`, {
      details: { path },
      hint: `pass ${flag} a file path, e.g. ${join(path, "out.json")}`,
    });
  }
  let parent = dirname(resolve(path));
  if (existsSync(parent)) parent = realpathSync(parent);
  const name = basename(path);
  // A run's own file, or anything under a run's frames/ or clips/ folder.
  let run: string | null = isRunDir(parent) && OWN_FILES.has(name) ? parent : null;
  for (let d = parent; run === null && dirname(d) !== d; d = dirname(d)) {
    const own = basename(d) === RUN_FILES.frames || basename(d) === RUN_FILES.clips;
    if (own && isRunDir(dirname(d))) run = dirname(d);
  }
  if (run !== null) {
    throw new ProvaelError(
      "run/out-exists",
      `${flag} ${path} would write over ${name} of the run in ${run}; results are never overwritten`,
      {
        details: { path, run },
        hint: `write to another file name (e.g. ${join(dirname(path), `custom-${name}`)}) or outside the run directory`,
      },
    );
  }
}

/** Checks a directory an output flag names: it may be missing (it is created) but not a file. */
export function checkOutputDir(path: string, flag: string): void {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st && !st.isDirectory()) {
    throw new ProvaelError(
      "io/write",
      `${flag} ${path} is ${st.isSymbolicLink() ? "a symbolic link" : "a file"}, not a directory`,
      {
        details: { path },
        hint: `${flag} names a directory: pass a new or empty directory path`,
      },
    );
  }
}
