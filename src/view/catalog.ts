/**
 * The runs a viewer shows: each directory given is a run directory or a root searched (three
 * levels down, never through a symbolic link) for run directories. A run is known by a short id
 * derived from its real path, so links stay valid when runs are added under a root. Reads go
 * through `readRun` and are cached until a file of the run changes (a run in progress is read
 * again each time its journal grows).
 */
import { existsSync, lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { assertInside, RUN_FILES } from "../rundir/files.js";
import { type RunRead, readRun } from "../rundir/read.js";

export interface CatalogEntry {
  id: string;
  /** The run's real directory. */
  dir: string;
  /** Where it sits under the directory it was found from (shown to people). */
  label: string;
  /** The root (a directory given to the viewer) it was found under. */
  root: string;
}

const MAX_DEPTH = 3;

const isRunDir = (dir: string) =>
  existsSync(join(dir, RUN_FILES.report)) || existsSync(join(dir, RUN_FILES.journal));

/** A run's files may not be links that leave its directory. */
function checkOwnFiles(dir: string): void {
  for (const name of [
    RUN_FILES.report,
    RUN_FILES.journal,
    RUN_FILES.manifest,
    RUN_FILES.trajectories,
  ])
    if (existsSync(join(dir, name))) assertInside(dir, join(dir, name));
}

export class Catalog {
  private readonly roots: string[];
  private entries = new Map<string, CatalogEntry>();
  private cache = new Map<string, { stamp: string; read: RunRead }>();

  constructor(dirs: readonly string[]) {
    if (dirs.length === 0) {
      throw new ProvaelError("config/invalid", "no run directory to show", {
        hint: "pass run directories or a folder holding them, e.g. `provael view runs/`",
      });
    }
    this.roots = dirs.map((d) => {
      if (!existsSync(d) || !statSync(d).isDirectory()) {
        throw new ProvaelError("io/read", `${d} is not a directory`, {
          hint: "pass the --out directory of a run, or a folder holding run directories",
        });
      }
      return realpathSync(d);
    });
    this.refresh();
  }

  /** The directories given, as real paths: nothing outside them is ever read or served. */
  get rootDirs(): readonly string[] {
    return this.roots;
  }

  /** Looks for run directories again (new runs under a root appear). */
  refresh(): CatalogEntry[] {
    const found = new Map<string, CatalogEntry>();
    for (const root of this.roots) {
      const walk = (dir: string, depth: number) => {
        if (isRunDir(dir)) {
          const id = sha256(dir).slice(7, 17);
          const rel = relative(root, dir);
          found.set(id, { id, dir, root, label: rel === "" ? basename(dir) : rel });
          return;
        }
        if (depth === 0) return;
        let names: import("node:fs").Dirent[];
        try {
          names = readdirSync(dir, { withFileTypes: true });
        } catch {
          return;
        }
        // Dirent.isDirectory() is false for a link: links are never followed.
        for (const e of names
          .filter((n) => n.isDirectory())
          .sort((a, b) => (a.name < b.name ? -1 : 1)))
          walk(join(dir, e.name), depth - 1);
      };
      walk(root, MAX_DEPTH);
    }
    this.entries = found;
    return this.list();
  }

  /**
   * Refuses a path the viewer would write to (a bundle, the frame cache) that lies inside one of
   * the runs it reads: a finished run is never written to.
   */
  assertOutsideRuns(path: string, flag: string): void {
    let p = resolve(path);
    const rest: string[] = [];
    while (!existsSync(p) && dirname(p) !== p) {
      rest.unshift(basename(p));
      p = dirname(p);
    }
    const real = join(realpathSync(p), ...rest);
    for (const e of this.entries.values()) {
      if (`${real}/`.startsWith(`${e.dir}/`)) {
        throw new ProvaelError(
          "run/out-exists",
          `${flag} ${path} is inside the run ${e.dir}; results are never written to`,
          { hint: `pass ${flag} a directory outside the run directories` },
        );
      }
    }
  }

  list(): CatalogEntry[] {
    return [...this.entries.values()].sort((a, b) =>
      a.label < b.label ? -1 : a.label > b.label ? 1 : 0,
    );
  }

  entry(id: string): CatalogEntry {
    if (!this.entries.has(id)) this.refresh();
    const e = this.entries.get(id);
    if (!e) {
      throw new ProvaelError("run/not-found", `no run with id '${id.slice(0, 40)}'`, {
        hint: "open the runs page to see the runs this viewer serves",
      });
    }
    return e;
  }

  /** The run, read again only when one of its files changed since the last read. */
  read(id: string): RunRead {
    const e = this.entry(id);
    const stamp = [RUN_FILES.report, RUN_FILES.manifest, RUN_FILES.journal]
      .map((f) => {
        const st = lstatSync(join(e.dir, f), { throwIfNoEntry: false });
        return st ? `${st.size}:${st.mtimeMs}` : "-";
      })
      .join("|");
    const hit = this.cache.get(id);
    if (hit && hit.stamp === stamp) return hit.read;
    let read: RunRead;
    try {
      checkOwnFiles(e.dir);
      read = readRun(e.dir);
    } catch (err) {
      read = {
        state: "broken",
        dir: e.dir,
        header: null,
        problem: {
          file: "(the directory)",
          field: "(the whole file)",
          message: (err as Error).message,
          issues: 1,
        },
      };
    }
    this.cache.set(id, { stamp, read });
    return read;
  }
}
