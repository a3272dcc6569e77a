/**
 * An episode is named by its cell id or any unique prefix of it (9 characters or more, as the
 * viewer's table shows it) wherever an episode id is taken: `provael video --cell`, the viewer's
 * episode, frames and clip addresses, and the page's own `#/run/ID/episode/CELL`. Each surface
 * takes the prefix, and refuses an unknown one with the closest id and a too-short one, through
 * the one resolver (src/rundir/cell-id.ts, whose unit test covers ambiguous prefixes).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startViewServer, type ViewServer } from "../../src/view/server.js";
import { runCli } from "../support/cli.js";
import { sharedRun } from "../support/shared-run.js";
import { tempDir } from "../support/tmp.js";

/** The durability tests' run: shared, read only. */
const RUN = [
  "attack",
  "--policy",
  "stub",
  "--suite",
  "stub",
  "--attacks",
  "none,control,instruction",
  "--seeds",
  "6",
  "--workers",
  "1",
  "--no-html",
];
const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const hasFfmpeg = spawnSync("ffmpeg", ["-version"]).status === 0;

interface Ep {
  cell: string;
  arm: string;
  task: string;
  seed: number;
}

const root = tempDir("provael-ids-");
const cache = join(root, "cache");
let dir: string;
let view: ViewServer;
let runId: string;
let ep: Ep;
/** Each way of naming `ep`: its first 9 characters, a mistyped 9th, and 6 characters. */
let prefix: string;
let typo: string;
let short: string;

beforeAll(async () => {
  const run = sharedRun(RUN);
  expect(run.code, run.stderr).toBe(0);
  dir = run.dir;
  const eps = (JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as { episodes: Ep[] })
    .episodes;
  ep = eps.find((e) => e.arm !== "none") as Ep;
  prefix = ep.cell.slice(0, 9);
  // The 9th character changed to one that starts no episode's id.
  const digits = "0123456789abcdef".split("").filter((d) => d !== ep.cell[8]);
  typo = digits
    .map((d) => `${ep.cell.slice(0, 8)}${d}`)
    .find((p) => !eps.some((e) => e.cell.startsWith(p))) as string;
  short = ep.cell.slice(0, 6);
  view = await startViewServer({ dirs: [dir], cacheRoot: cache });
  const list = (await (await fetch(new URL("api/runs", view.url))).json()) as { id: string }[];
  runId = list[0]?.id as string;
}, 600_000);

afterAll(async () => {
  await view?.close();
});

/** What a surface answered for an id: the full cell it resolved to, or its refusal's text. */
type Answer = { ok: true; cell: string | null } | { ok: false; error: string };

async function api(
  path: string,
  pick: (body: Record<string, unknown>) => string | null,
): Promise<Answer> {
  const res = await fetch(new URL(path, view.url));
  if (res.ok) {
    const type = res.headers.get("content-type") ?? "";
    const body = type.includes("json") ? ((await res.json()) as Record<string, unknown>) : {};
    return {
      ok: true,
      cell: pick({ ...body, disposition: res.headers.get("content-disposition") }),
    };
  }
  const body = (await res.json()) as { error: string; hint?: string };
  return { ok: false, error: `${res.status} ${body.error} (${body.hint ?? ""})` };
}

const SURFACES: [string, boolean, (given: string) => Promise<Answer>][] = [
  [
    "provael video --cell",
    hasFfmpeg,
    async (given) => {
      const r = runCli([
        "video",
        ...["--in", dir, "--cell", given, "--cache", cache],
        ...["--out", join(root, `${given}.gif`)],
      ]);
      return r.code === 0 ? { ok: true, cell: null } : { ok: false, error: r.stderr };
    },
  ],
  [
    "GET api/runs/ID/episode/CELL",
    true,
    (given) =>
      api(`api/runs/${runId}/episode/${given}`, (b) => (b.episode as { cell: string }).cell),
  ],
  [
    "GET api/runs/ID/frames/CELL",
    true,
    (given) => api(`api/runs/${runId}/frames/${given}`, (b) => b.cell as string),
  ],
  [
    "GET video/ID/CELL.gif",
    hasFfmpeg,
    (given) =>
      api(
        `video/${runId}/${given}.gif`,
        (b) => /filename="(c[0-9a-f]+)-pair\.gif"/.exec(String(b.disposition))?.[1] ?? null,
      ),
  ],
];

describe("an episode id by any unique prefix, on every surface that takes one", () => {
  it.each(SURFACES)(
    "%s",
    async (name, available, ask) => {
      if (!available) return; // needs FFmpeg to render the clip
      const full = await ask(ep.cell);
      expect(full, name).toMatchObject({ ok: true });
      const taken = await ask(prefix);
      expect(taken, name).toMatchObject({ ok: true });
      if (taken.ok && taken.cell !== null) expect(taken.cell, name).toBe(ep.cell);
      const unknown = await ask(typo);
      expect(unknown.ok, name).toBe(false);
      if (!unknown.ok) {
        expect(unknown.error, name).toContain(`no episode ${typo} (did you mean ${ep.cell} (`);
        expect(unknown.error, name).toMatch(/provael view/);
      }
      const tooShort = await ask(short);
      expect(tooShort.ok, name).toBe(false);
      if (!tooShort.ok) expect(tooShort.error, name).toMatch(/shorter than the 9 characters/);
    },
    300_000,
  );

  it.skipIf(!hasChromium)(
    "the page's address #/run/ID/episode/CELL",
    async () => {
      const { chromium } = await import("playwright-core");
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run"],
      });
      try {
        const page = await browser.newPage();
        // Playwright's 30 s default ran out in a full suite on a loaded 2-core machine (the page
        // shows the episode in about a second on a quiet one): the test's own limit governs.
        page.setDefaultTimeout(240_000);
        await page.goto(`${view.url}#/run/${runId}/episode/${prefix}`);
        await page.waitForSelector("#step");
        expect(await page.locator("#crumbs").textContent()).toContain(
          `${ep.arm} · ${ep.task} · seed ${ep.seed}`,
        );
        // The address names the episode in full once the page has shown it.
        await page.waitForFunction((cell) => location.hash.includes(`/episode/${cell}?`), ep.cell);
        await page.goto(`${view.url}#/run/${runId}/episode/${typo}`);
        await page.waitForSelector("#load-error");
        expect(await page.locator("#load-error").textContent()).toContain(
          `(did you mean ${ep.cell} (`,
        );
      } finally {
        await browser.close();
      }
    },
    300_000,
  );
});
