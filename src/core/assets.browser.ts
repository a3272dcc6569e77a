/**
 * The browser twin of `assets.ts` (same exports): the package files a page needs, fetched by the
 * page and handed over with `installAssets` before anything loads a scene or weights. Paths are
 * package-relative (`assets/mujoco/robot.xml`), since the twin of `package-root.ts` is "".
 */

const files = new Map<string, Uint8Array>();

/** Installs fetched files by package-relative path (a Web Worker does this before playing). */
export function installAssets(given: Record<string, Uint8Array>): void {
  for (const [path, bytes] of Object.entries(given)) files.set(normalise(path), bytes);
}

const normalise = (path: string) =>
  path
    .split("/")
    .filter((p) => p !== "" && p !== ".")
    .join("/");

export function readAsset(path: string): Uint8Array {
  const b = files.get(normalise(path));
  if (!b) throw new Error(`ENOENT: no such file in the page's assets: '${path}'`);
  return b;
}

export function readAssetText(path: string): string {
  return new TextDecoder().decode(readAsset(path));
}

export function listAssets(dir: string): string[] {
  const prefix = `${normalise(dir)}/`;
  const names = [...files.keys()]
    .filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes("/"))
    .map((p) => p.slice(prefix.length));
  if (names.length === 0) throw new Error(`ENOENT: no such folder in the page's assets: '${dir}'`);
  return names.sort();
}

export function assetExists(path: string): boolean {
  return files.has(normalise(path));
}

export const joinPath = (...parts: string[]): string => normalise(parts.join("/"));

/** In a page every package file is package-relative: the package root is "". */
export function folderFrom(_moduleUrl: string, _relative: string): string {
  return "";
}
