/**
 * `provael view`, `provael video` and `--bundle` on two stub runs of one plan (the second with a
 * more susceptible policy, so some pairs change outcome): the server's read-only and path rules,
 * live refresh of a run in progress, and the pages in real Chromium, served and from file://.
 */
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startViewServer, type ViewServer } from "../../src/view/server.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const hasFfmpeg = spawnSync("ffmpeg", ["-version"]).status === 0;
/** Set to a folder (docs/images) to keep a screenshot of each page. */
const SHOTS = process.env.PROVAEL_SCREENSHOTS;

interface Ep {
  cell: string;
  arm: string;
  task: string;
  seed: number;
  unsafe: boolean | null;
  first_unsafe_step: number | null;
}

const root = tempDir("provael-view-");
const runs = join(root, "runs");
const A = join(runs, "a");
const B = join(runs, "b");
const cache = join(root, "cache");
let view: ViewServer;
let ids: { a: string; b: string };

function play(out: string, extra: string[] = [], html = false) {
  const r = runCli([
    "attack",
    "--suite",
    "stub",
    "--policy",
    "stub",
    "--attacks",
    "none,roleplay",
    "--no-controls",
    "--tasks",
    "fetch_cup",
    "--seeds",
    "6",
    ...(html ? [] : ["--no-html"]),
    "--out",
    out,
    ...extra,
  ]);
  if (r.code !== 0) throw new Error(r.stderr);
}

const episodes = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as { episodes: Ep[] }).episodes;

async function get(path: string, init: RequestInit & { host?: string } = {}) {
  const res = await fetch(new URL(path, view.url), init);
  return { status: res.status, body: await res.text() };
}

beforeAll(async () => {
  mkdirSync(runs, { recursive: true });
  play(A);
  // B writes report.html and with it, where FFmpeg runs, its showcase clip.
  play(B, ["--policy-option", "susceptibility=3"], true);
  view = await startViewServer({ dirs: [runs], cacheRoot: cache });
  const list = JSON.parse((await get("api/runs")).body) as { id: string; label: string }[];
  ids = {
    a: list.find((r) => r.label === "a")?.id as string,
    b: list.find((r) => r.label === "b")?.id as string,
  };
}, 120_000);

afterAll(async () => {
  await view?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("provael view: the server", () => {
  it("lists the runs under a root with their headline rates", async () => {
    const list = JSON.parse((await get("api/runs")).body) as {
      label: string;
      state: string;
      headline: { treatment_unsafe: { n: number } };
    }[];
    expect(list.map((r) => r.label).sort()).toEqual(["a", "b"]);
    expect(list.every((r) => r.state === "finished" && r.headline.treatment_unsafe.n === 6)).toBe(
      true,
    );
  });

  it("is read-only and refuses other hosts", async () => {
    expect((await get("api/runs", { method: "POST" })).status).toBe(405);
    expect((await get("api/runs", { method: "DELETE" })).status).toBe(405);
    // fetch may not set Host; node:http may (as a rebinding page's request would arrive).
    const status = await new Promise<number>((ok, bad) => {
      const u = new URL("api/runs", view.url);
      request(
        { host: u.hostname, port: u.port, path: u.pathname, headers: { Host: "evil.example" } },
        (res) => {
          res.resume();
          ok(res.statusCode ?? 0);
        },
      )
        .on("error", bad)
        .end();
    });
    expect(status).toBe(421);
  });

  it("serves no path outside the runs: traversal, encoded traversal, unknown ids", async () => {
    const cell = episodes(A)[0]?.cell as string;
    for (const p of [
      `files/${ids.a}/${cell}/..%2F..%2Freport.json`,
      `files/${ids.a}/${cell}/%2e%2e`,
      `files/${ids.a}/..%2F..%2F..%2Fetc/passwd`,
      `files/${ids.a}/${cell}/report.json`,
      `files/0123456789/${cell}/agentview-0000.png`,
      "api/runs/..%2F..",
      "etc/passwd",
      "../../etc/passwd",
      "%2e%2e/%2e%2e/etc/passwd",
    ]) {
      const r = await get(p);
      expect(r.status, p).toBeGreaterThanOrEqual(400);
      expect(r.body, p).not.toContain("root:");
      expect(r.body, p).not.toContain('"episodes"');
    }
  });

  it("follows no symbolic link out of a run: a linked frame, a linked run folder", async () => {
    const linked = join(root, "linked");
    cpSync(A, linked, { recursive: true });
    const cell = episodes(linked).find((e) => e.arm === "roleplay")?.cell as string;
    mkdirSync(join(linked, "frames", cell), { recursive: true });
    writeFileSync(join(root, "secret.png"), "secret");
    symlinkSync(join(root, "secret.png"), join(linked, "frames", cell, "agentview-0000.png"));
    // A link to a run directory placed under the served root is not followed either.
    symlinkSync(join(root, "linked"), join(runs, "via-link"));
    const v = await startViewServer({ dirs: [linked], cacheRoot: join(root, "no-cache") });
    try {
      const list = JSON.parse(await (await fetch(`${v.url}api/runs`)).text()) as { id: string }[];
      const id = list[0]?.id as string;
      // Replay made impossible: only the run's own (linked) frame could answer.
      const r = await fetch(`${v.url}files/${id}/${cell}/agentview-0000.png`);
      expect(r.status).toBe(404);
      expect(await r.text()).not.toContain("secret");
    } finally {
      await v.close();
    }
    const labels = (JSON.parse((await get("api/runs")).body) as { label: string }[]).map(
      (r) => r.label,
    );
    expect(labels).not.toContain("via-link");
    rmSync(join(runs, "via-link"));
  });

  it("never writes a bundle inside a run directory", () => {
    const r = runCli(["view", A, "--bundle", join(A, "site"), "--cache", cache]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("never written to");
    expect(existsSync(join(A, "site"))).toBe(false);
  });

  it("replays an episode's frames on demand into the cache, reproducing the record", async () => {
    const ep = episodes(A).find((e) => e.unsafe === true) as Ep;
    const r = JSON.parse((await get(`api/runs/${ids.a}/frames/${ep.cell}`)).body);
    expect(r.index.source).toBe("replay");
    expect(r.index.steps.length).toBe(20);
    expect(r.index.reproduced).toEqual({ matches: true, differences: [] });
    const fired = r.index.timeline.find(
      (t: { predicates: Record<string, { unsafe: boolean }> }) => t.predicates.keep_out?.unsafe,
    );
    expect(fired.step).toBe(ep.first_unsafe_step);
    // Into the cache, never into the finished run.
    expect(existsSync(join(A, "frames"))).toBe(false);
    const png = await fetch(new URL(`files/${ids.a}/${ep.cell}/agentview-0000.png`, view.url));
    expect(png.status).toBe(200);
    expect(png.headers.get("content-type")).toBe("image/png");
  });

  it("refreshes a run in progress as its journal grows, marking its rates partial", async () => {
    const live = join(runs, "live");
    mkdirSync(live);
    const lines = readFileSync(join(A, "journal.jsonl"), "utf8").trimEnd().split("\n");
    writeFileSync(join(live, "journal.jsonl"), `${lines.slice(0, 4).join("\n")}\n`);
    const first = JSON.parse((await get("api/runs")).body).find(
      (r: { label: string }) => r.label === "live",
    );
    expect(first).toMatchObject({ state: "in-progress", episodes: 3, planned: 12, partial: true });
    appendFileSync(join(live, "journal.jsonl"), `${lines.slice(4, 9).join("\n")}\n`);
    const run = JSON.parse((await get(`api/runs/${first.id}`)).body);
    expect(run.summary.episodes).toBe(8);
    expect(run.episodes.length).toBe(8);
    rmSync(live, { recursive: true });
  });
});

describe.skipIf(!hasFfmpeg)(
  `provael video${hasFfmpeg ? "" : " (skipped: no ffmpeg on PATH; apt-get install ffmpeg)"}`,
  () => {
    it("renders an attacked pair as GIF and MP4 (ffmpeg reads them back: one frame per step)", () => {
      const ep = episodes(A).find((e) => e.unsafe === true) as Ep;
      for (const ext of ["gif", "mp4"]) {
        const out = join(root, `pair.${ext}`);
        const r = runCli([
          "video",
          "--in",
          A,
          "--cell",
          ep.cell,
          "--twin",
          "--out",
          out,
          "--cache",
          cache,
        ]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain("20 steps");
        const probe = spawnSync(
          "ffprobe",
          [
            "-v",
            "error",
            "-count_frames",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=nb_read_frames",
            "-of",
            "csv=p=0",
            out,
          ],
          { encoding: "utf8" },
        );
        expect(Number(probe.stdout.trim())).toBe(20);
      }
      // Never over a run's own file.
      const r = runCli(["video", "--in", A, "--cell", ep.cell, "--out", join(A, "report.json")]);
      expect(r.code).not.toBe(0);
    });
  },
);

describe.skipIf(!hasChromium)(
  `provael view in Chromium${hasChromium ? "" : ` (skipped: no browser at ${CHROMIUM}; apt-get install chromium)`}`,
  () => {
    type Page = import("playwright-core").Page;
    type Browser = import("playwright-core").Browser;
    let browser: Browser;
    let bundle: string;

    beforeAll(async () => {
      const { chromium } = await import("playwright-core");
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run"],
      });
      bundle = join(root, "bundle");
      const r = runCli(["view", A, B, "--bundle", bundle, "--cache", cache]);
      expect(r.code, r.stderr).toBe(0);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
    });

    async function open(url: string): Promise<{ page: Page; problems: string[] }> {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      // Playwright's 30 s default is no safety net on a loaded 2-core machine: the test's limit governs.
      page.setDefaultTimeout(240_000);
      const problems: string[] = [];
      page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(`console: ${m.text()}`);
      });
      page.on("request", (r) => {
        const u = r.url();
        if (!u.startsWith(view.url) && !u.startsWith("file://") && !u.startsWith("data:"))
          problems.push(`network: ${u}`);
      });
      await page.goto(url);
      return { page, problems };
    }

    const shot = async (page: Page, name: string) => {
      if (SHOTS) await page.screenshot({ path: join(SHOTS, name), fullPage: true });
    };

    /** The checks of the issue, the same served and from file://. */
    async function walk(base: string, tag: string) {
      const { page, problems } = await open(base);
      // Runs: both runs, linked.
      await page.waitForSelector("#runs tr.run-row");
      expect(await page.locator("#runs tr.run-row").count()).toBe(2);
      await shot(page, `view-runs${tag}.png`);
      await page.locator(`tr[data-run="${ids.a}"] a.run-link`).click();
      await page.waitForSelector("#episodes");
      expect(await page.locator("#episodes tr.ep-row").count()).toBe(episodes(A).length);
      await shot(page, `view-run${tag}.png`);
      // Filter to unsafe episodes: exactly the unsafe ones remain.
      await page.locator("#f-unsafe").check();
      const unsafe = episodes(A).filter((e) => e.unsafe === true);
      await page.waitForFunction(
        (n) =>
          document.getElementById("app")?.dataset.route === location.hash &&
          document.querySelectorAll("#episodes tr.ep-row").length === n,
        unsafe.length,
      );
      const cell = (await page
        .locator("#episodes tr.ep-row")
        .first()
        .getAttribute("data-cell")) as string;
      const ep = unsafe.find((e) => e.cell === cell) as Ep;
      expect(ep).toBeDefined();
      // Open it: both players, stepped to the predicate's step, show that step's frame.
      await page.locator(`tr[data-cell="${cell}"] a.ep-link`).click();
      await page.waitForSelector('#app[data-frames-ready="1"]');
      await page.locator("#to-predicate").click();
      const k = ep.first_unsafe_step as number;
      const name = `agentview-${String(k).padStart(4, "0")}.png`;
      for (const side of ["#players-0", "#players-1"]) {
        const img = page.locator(`${side} img.frame`).first();
        expect(await img.getAttribute("src")).toBe(
          `files/${ids.a}/${side === "#players-0" ? cell : twinOf(A, ep).cell}/${name}`,
        );
        expect(await img.getAttribute("data-step")).toBe(String(k));
        await page.waitForFunction((sel) => {
          const i = document.querySelector(`${sel} img.frame`) as HTMLImageElement | null;
          return Boolean(i?.complete) && (i?.naturalWidth ?? 0) > 0;
        }, side);
      }
      expect(await page.locator("#players-0 img.frame").first().getAttribute("class")).toContain(
        "fired",
      );
      expect(
        await page.locator("#players-1 img.frame").first().getAttribute("class"),
      ).not.toContain("fired");
      expect(await page.locator("#step-text").textContent()).toContain(`step ${k} `);
      // The deep link opens exactly this view.
      expect(page.url()).toContain(`#/run/${ids.a}/episode/${cell}?step=${k}`);
      await shot(page, `view-episode${tag}.png`);
      // Compare the two runs and follow a changed pair.
      await page.goto(`${base}#/`);
      await page.waitForSelector("#runs tr.run-row");
      await page.locator(`input.pick[data-run="${ids.a}"]`).check();
      await page.locator(`input.pick[data-run="${ids.b}"]`).check();
      await page.locator("#compare-btn").click();
      await page.waitForSelector("#changed");
      const a = new Map(episodes(A).map((e) => [e.cell, e.unsafe]));
      const changed = episodes(B).filter((e) => a.get(e.cell) !== e.unsafe);
      expect(changed.length).toBeGreaterThan(0);
      expect(await page.locator("#changed tr.changed-row").count()).toBe(changed.length);
      expect(await page.locator("#gate").textContent()).toContain("Regression gate");
      await shot(page, `view-compare${tag}.png`);
      const target = (await page
        .locator("#changed tr.changed-row")
        .first()
        .getAttribute("data-cell")) as string;
      await page.locator("#changed a.changed-link").first().click();
      await page.waitForSelector('#app[data-frames-ready="1"]');
      expect(page.url()).toContain(`#/run/${ids.b}/episode/${target}`);
      expect(await page.locator("h1").first().textContent()).toContain("roleplay");
      expect(problems, problems.join("\n")).toEqual([]);
      await page.close();
    }

    const twinOf = (dir: string, ep: Ep) =>
      episodes(dir).find((e) => e.arm === "none" && e.task === ep.task && e.seed === ep.seed) as Ep;

    it("served: open a run, filter unsafe, step both players to the predicate, compare and follow a changed pair", async () => {
      await walk(view.url, "");
    });

    it("the bundle opens from file:// with the same checks and no network", async () => {
      await walk(`file://${join(bundle, "index.html")}`, "-bundle");
    });

    it("filters the episodes by arm, task failed and a word of the instruction, each a link", async () => {
      const all = JSON.parse(readFileSync(join(A, "report.json"), "utf8")).episodes as (Ep & {
        task_success: boolean | null;
        instruction: { original: string; received: string | null };
      })[];
      const { page, problems } = await open(`${view.url}#/run/${ids.a}`);
      await page.waitForSelector("#episodes");
      const rows = (n: number) =>
        // The view re-renders on hashchange: wait until the page shows the current filters, or
        // the next input goes into the old page's controls and is filed under its filters.
        page.waitForFunction(
          (k) =>
            document.getElementById("app")?.dataset.route === location.hash &&
            document.querySelectorAll("#episodes tr.ep-row").length === k,
          n,
        );
      await page.locator("#f-arm").selectOption("roleplay");
      const roleplay = all.filter((e) => e.arm === "roleplay");
      await rows(roleplay.length);
      expect(page.url()).toContain("arm=roleplay");
      await page.locator("#f-failed").check();
      await rows(roleplay.filter((e) => e.task_success === false).length);
      await page.locator("#f-failed").uncheck();
      await rows(roleplay.length);
      // A word only the attacked instruction has: the benign arm's rows never match it.
      const benign = new Set(
        all.filter((e) => e.arm === "none").map((e) => e.instruction.original),
      );
      const received = (roleplay[0]?.instruction.received ?? "").split(/\s+/);
      const word = received.find((w) => w.length > 4 && ![...benign].some((b) => b.includes(w)));
      expect(word).toBeDefined();
      await page.locator("#f-arm").selectOption("");
      await rows(Math.min(all.length, 100));
      await page.locator("#f-q").fill(word as string);
      await page.locator("#f-q").press("Enter");
      await rows(
        all.filter((e) =>
          (e.instruction.received ?? e.instruction.original)
            .toLowerCase()
            .includes((word as string).toLowerCase()),
        ).length,
      );
      expect(problems, problems.join("\n")).toEqual([]);
      await page.close();
    });

    interface ClipInfo {
      attacked: string;
      twin: string | null;
      frames: number;
      fps: number;
      width: number;
      height: number;
      moments: { cell: string; seconds: number; first_unsafe_step: number }[];
    }
    const clipInfo = (dir: string) =>
      JSON.parse(readFileSync(join(dir, "clips", "showcase.json"), "utf8")) as ClipInfo;

    /** Waits for a video's metadata; returns what Chromium decoded of it. */
    async function videoFacts(page: Page, sel: string) {
      await page.waitForFunction(
        (s) => ((document.querySelector(s) as HTMLVideoElement | null)?.readyState ?? 0) >= 1,
        sel,
        { timeout: 120_000 },
      );
      return page.evaluate((s) => {
        const v = document.querySelector(s) as HTMLVideoElement;
        return {
          duration: v.duration,
          width: v.videoWidth,
          height: v.videoHeight,
          error: v.error?.code ?? null,
        };
      }, sel);
    }

    it.skipIf(!hasFfmpeg)(
      "report.html plays its showcase clip: the duration and frame size its info file names, the predicate's moment linked",
      async () => {
        const info = clipInfo(B);
        // `provael report` writes the same page elsewhere, the clip copied beside it.
        const pages = join(root, "pages");
        const r = runCli(["report", "--in", B, "--format", "html", "--out", join(pages, "b.html")]);
        expect(r.code, r.stderr).toBe(0);
        expect(readFileSync(join(pages, "clips", "showcase.webm"))).toEqual(
          readFileSync(join(B, "clips", "showcase.webm")),
        );
        for (const url of [`file://${join(B, "report.html")}`, `file://${join(pages, "b.html")}`]) {
          const { page, problems } = await open(url);
          const facts = await videoFacts(page, "video#showcase-clip");
          expect(facts.error).toBeNull();
          expect(facts.width).toBe(info.width);
          expect(facts.height).toBe(info.height);
          expect(facts.duration).toBeCloseTo(info.frames / info.fps, 1);
          const moment = info.moments.find((m) => m.cell === info.attacked);
          expect(moment).toBeDefined();
          const caption = (await page.locator("figure.clip figcaption").textContent()) ?? "";
          expect(caption).toContain(`fired at step ${moment?.first_unsafe_step}`);
          expect(await page.locator("figure.clip a.moment").first().getAttribute("href")).toBe(
            `clips/showcase.webm#t=${moment?.seconds.toFixed(1)}`,
          );
          expect(problems, problems.join("\n")).toEqual([]);
          await page.close();
        }
      },
    );

    it.skipIf(!hasFfmpeg)(
      "the showcase pair's episode page plays the run's clip, served and from the bundle; other episodes say what a bundle cannot render",
      async () => {
        const info = clipInfo(B);
        expect(existsSync(join(bundle, "files", ids.b, "clips", "showcase.webm"))).toBe(true);
        for (const base of [view.url, `file://${join(bundle, "index.html")}`]) {
          const { page, problems } = await open(`${base}#/run/${ids.b}/episode/${info.attacked}`);
          await page.waitForSelector("#showcase-clip-box");
          await page.locator("#showcase-clip-box summary").click();
          const facts = await videoFacts(page, "video#showcase-clip");
          expect(facts.width).toBe(info.width);
          expect(facts.duration).toBeCloseTo(info.frames / info.fps, 1);
          const bundled = base.startsWith("file:");
          expect(await page.locator("#download").count()).toBe(bundled ? 0 : 1);
          if (bundled) {
            // Nothing points at the server's clip route; the page says how to render one.
            expect(await page.locator('a[href^="video/"]').count()).toBe(0);
            expect(await page.locator("#no-download").textContent()).toContain("provael video");
          }
          expect(problems, problems.join("\n")).toEqual([]);
          await page.close();
        }
      },
    );

    it("shows a run in progress live: the page counts new episodes as the journal grows", async () => {
      const live = join(runs, "live2");
      mkdirSync(live);
      const lines = readFileSync(join(A, "journal.jsonl"), "utf8").trimEnd().split("\n");
      writeFileSync(join(live, "journal.jsonl"), `${lines.slice(0, 3).join("\n")}\n`);
      const list = JSON.parse((await get("api/runs")).body) as { id: string; label: string }[];
      const id = list.find((r) => r.label === "live2")?.id as string;
      const { page, problems } = await open(`${view.url}#/run/${id}`);
      await page.waitForSelector("#live");
      expect(await page.locator("#partial").count()).toBe(1);
      expect(await page.locator("#episodes tr.ep-row").count()).toBe(2);
      appendFileSync(join(live, "journal.jsonl"), `${lines.slice(3, 8).join("\n")}\n`);
      await page.waitForFunction(
        () => document.querySelectorAll("#episodes tr.ep-row").length === 7,
        undefined,
        { timeout: 120_000 },
      );
      await shot(page, "view-live.png");
      expect(problems).toEqual([]);
      await page.close();
      rmSync(live, { recursive: true });
    });
  },
);
