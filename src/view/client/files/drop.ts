/// <reference lib="dom" />
/**
 * What the user handed the page: a dropped directory (walked through its entries), files picked
 * with a directory or file input, or a zip of either. Each file keeps its path relative to what
 * was dropped, so a run directory's layout (`frames/<cell>/…`) is kept.
 */
import { readZip } from "./zip.js";

export interface LocalFile {
  /** Path relative to what was dropped, `/`-separated. */
  path: string;
  file: Blob;
}

function readEntries(dir: FileSystemDirectoryEntry): Promise<FileSystemEntry[]> {
  const reader = dir.createReader();
  const all: FileSystemEntry[] = [];
  // readEntries answers in batches until it answers an empty one.
  return new Promise((ok, fail) => {
    const next = () =>
      reader.readEntries((batch) => {
        if (batch.length === 0) return ok(all);
        all.push(...batch);
        next();
      }, fail);
    next();
  });
}

async function walk(entry: FileSystemEntry, prefix: string, out: LocalFile[]): Promise<void> {
  const path = prefix ? `${prefix}/${entry.name}` : entry.name;
  if (entry.isFile) {
    const file = await new Promise<File>((ok, fail) =>
      (entry as FileSystemFileEntry).file(ok, fail),
    );
    out.push({ path, file });
  } else if (entry.isDirectory) {
    for (const child of await readEntries(entry as FileSystemDirectoryEntry))
      await walk(child, path, out);
  }
}

const isZip = (f: LocalFile) => f.path.toLowerCase().endsWith(".zip");

/** Zips are opened in place: their entries sit under the zip's name. */
async function expand(files: LocalFile[]): Promise<LocalFile[]> {
  const out: LocalFile[] = [];
  for (const f of files) {
    if (!isZip(f)) {
      out.push(f);
      continue;
    }
    const base = f.path.replace(/\.zip$/i, "");
    for (const e of await readZip(f.file)) out.push({ path: `${base}/${e.path}`, file: e.file });
  }
  return out;
}

/** The files of a drop: directories walked, zips opened. */
export async function filesOfDrop(data: DataTransfer): Promise<LocalFile[]> {
  const entries = [...data.items].flatMap((i) => {
    const e = i.kind === "file" ? i.webkitGetAsEntry() : null;
    return e ? [e] : [];
  });
  const out: LocalFile[] = [];
  if (entries.length > 0) for (const e of entries) await walk(e, "", out);
  else for (const f of data.files) out.push({ path: f.name, file: f });
  return expand(out);
}

/** The files of an input (`webkitdirectory` gives each its relative path). */
export async function filesOfInput(list: FileList): Promise<LocalFile[]> {
  return expand([...list].map((f) => ({ path: f.webkitRelativePath || f.name, file: f })));
}
