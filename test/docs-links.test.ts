/**
 * Every document a user reads (README, CHANGELOG, docs/, examples/, profiles/) links only to
 * files that ship in this repository: a relative link must resolve to an existing file inside
 * it, and no document sends the reader to notes that live elsewhere.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");

function markdownFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...markdownFiles(p));
    else if (name.endsWith(".md")) out.push(p);
  }
  return out;
}

const DOCS = [
  join(ROOT, "README.md"),
  join(ROOT, "CHANGELOG.md"),
  ...["docs", "examples", "profiles"].flatMap((d) =>
    existsSync(join(ROOT, d)) ? markdownFiles(join(ROOT, d)) : [],
  ),
];

/** Inline links and images `[text](target)` and reference definitions `[id]: target`. */
function links(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
    found.push(m[1] as string);
  for (const m of text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)) found.push(m[1] as string);
  return found;
}

describe("documentation links", () => {
  it("finds the documents it checks", () => {
    expect(DOCS.length).toBeGreaterThan(10);
  });

  it.each(DOCS.map((d) => [relative(ROOT, d), d]))(
    "%s links only to files inside the repository",
    (_name, doc) => {
      const text = readFileSync(doc, "utf8");
      const broken: string[] = [];
      for (const target of links(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue; // URL or anchor
        const path = decodeURIComponent(target.split("#")[0] as string);
        const full = resolve(dirname(doc), path);
        if (!(full === ROOT || full.startsWith(ROOT + sep)) || !existsSync(full))
          broken.push(target);
      }
      expect(broken).toEqual([]);
      // Design notes that are not shipped are not something a reader can open.
      expect(text).not.toMatch(/\b(ARCHITECTURE|PROTOCOLS|STYLE)\.md\b|design notes/);
    },
  );
});
