/**
 * The browser twin of `package-root.ts` (same exports). In a page the package's files are
 * addressed relative to its root (see `assets.browser.ts`), and the version is the one the bundle
 * was built from (scripts/build-playground.mjs defines it from package.json).
 */
declare const __PROVAEL_VERSION__: string;

export const PACKAGE_ROOT = "";

export const TOOL_VERSION: string = __PROVAEL_VERSION__;
