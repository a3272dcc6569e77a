/**
 * The package's files (MJCF scenes, tiny-vla weights) as the episode code reads them: in Node
 * from disk; in a page from what the page fetched (the browser twin, `assets.browser.ts`, which
 * the bundle swaps in). Paths are the host's: absolute on disk here, package-relative in a page.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** A file's bytes (throws the host's error when it is missing). */
export function readAsset(path: string): Uint8Array {
  const b = readFileSync(path);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** A file as UTF-8 text. */
export function readAssetText(path: string): string {
  return readFileSync(path, "utf8");
}

/** The names of the files in a folder. */
export function listAssets(dir: string): string[] {
  return readdirSync(dir);
}

export function assetExists(path: string): boolean {
  return existsSync(path);
}

/** Joins path segments the host's way. */
export const joinPath: (...parts: string[]) => string = join;

/** The folder at `relative` from a module's URL: how a module finds the package from where it sits. */
export function folderFrom(moduleUrl: string, relative: string): string {
  return fileURLToPath(new URL(relative, moduleUrl));
}
