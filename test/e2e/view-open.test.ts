/**
 * The page that opens run directories in the browser (open.html), served as static files from
 * 127.0.0.1 and driven in headless Chromium: a CLI run directory picked with its directory
 * input shows its arms table and an episode beside its benign twin, a second run is compared with
 * the first, a run still in progress shows its episodes so far, and a `provael view --bundle`
 * zip opens too. The playground's copy of the page (viewer/open.html) replays a tabletop run
 * that stored no frames from its recorded actions, in a Web Worker. Every request the page makes
 * is recorded: none leaves 127.0.0.1, and the server is asked for the site's own files only.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveSite } from "../../src/playground/site.js";
import { writeOpenPage } from "../../src/view/open-page.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const hasZip = spawnSync("zip", ["-v"]).status === 0;
const hasFfmpeg = spawnSync("ffmpeg", ["-version"]).status === 0;
/** Set to a folder (docs/images) to keep a screenshot of each page. */
const SHOTS = process.env.PROVAEL_SCREENSHOTS;

interface Ep {
  cell: string;
  arm: string;
  task: string;
  seed: number;
  unsafe: boolean | null;
}

const root = tempDir("provael-view-open-");
const A = join(root, "runs", "a");
const B = join(root, "runs", "b");
/** A's journal cut short (no report.json): a run in progress, its last line torn. */
const C = join(root, "runs", "c");
/** A tabletop run written without report.html: it stores no frames. */
const T = join(root, "runs", "tabletop");
const site = join(root, "site");
const playground = join(root, "playground");

const report = (dir: string) =>
  JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as {
    run: { arms: string[] };
    episodes: Ep[];
  };

function play(out: string, extra: string[] = [], html = false) {
  const r = runCli([
    "attack",
    "--policy",
    "stub",
    "--suite",
    "stub",
    "--attacks",
    "none,control,instruction",
    "--seeds",
    "3",
    ...(html ? [] : ["--no-html"]),
    "--out",
    out,
    ...extra,
  ]);
  if (r.code !== 0) throw new Error(r.stderr);
}

describe.skipIf(!hasChromium)(
  `open.html in Chromium${hasChromium ? "" : ` (skipped: no browser at ${CHROMIUM}; apt-get install chromium)`}`,
  () => {
    type Browser = import("playwright-core").Browser;
    type Page = import("playwright-core").Page;
    let browser: Browser;
    let served: { server: Server; url: string };
    const seen: string[] = [];

    beforeAll(async () => {
      play(A);
      // B writes report.html and with it, where FFmpeg runs, its showcase clip.
      play(B, ["--policy-option", "susceptibility=3"], true);
      mkdirSync(site, { recursive: true });
      expect(writeOpenPage(site)).toEqual(["open.html", "open.js"]);
      served = await serveSite(site, 0, (method, url) => seen.push(`${method} ${url}`));
      const { chromium } = await import("playwright-core");
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run"],
      });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await new Promise((ok) => served?.server.close(ok));
    });

    /** A page of the open page (this site's, or `url`), recording requests and problems. */
    async function open(
      url = `${served.url}open.html`,
    ): Promise<{ page: Page; requests: string[]; problems: string[] }> {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      // Playwright's 30 s default is no safety net on a loaded 2-core machine: the test's limit governs.
      page.setDefaultTimeout(240_000);
      const requests: string[] = [];
      const problems: string[] = [];
      page.on("request", (r) => requests.push(`${r.method()} ${r.url()}`));
      page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(`console: ${m.text()}`);
      });
      await page.goto(url);
      return { page, requests, problems };
    }

    /** Every request stays on this machine: the page's own two files, or the dropped files. */
    function local(requests: string[]) {
      for (const r of requests) {
        const [method, url] = r.split(" ") as [string, string];
        expect(method, r).toBe("GET");
        const own = url === `${served.url}open.html` || url === `${served.url}open.js`;
        expect(own || url.startsWith("blob:http://127.0.0.1:") || url.startsWith("data:"), r).toBe(
          true,
        );
      }
      expect(seen).toContain("GET /open.js");
      // The server was asked for nothing else (no upload, no query carrying run data).
      expect(
        seen.every((s) => s === "GET /open.html" || s === "GET /open.js"),
        seen.join("\n"),
      ).toBe(true);
    }

    it("opens a dropped run directory: its arms table, then an episode beside its benign twin", async () => {
      const { page, requests, problems } = await open();
      await page.locator("#open-dir").setInputFiles(A);
      await page.waitForSelector("#runs tr.run-row");
      expect(await page.locator("#runs tr.run-row").count()).toBe(1);
      await page.locator("#runs a.run-link").click();
      await page.waitForSelector("#arms");
      const rep = report(A);
      expect(await page.locator("#arms tbody tr").count()).toBe(rep.run.arms.length);
      expect(await page.locator("#episodes tr.ep-row").count()).toBe(rep.episodes.length);
      expect(await page.locator("#caveats").textContent()).toContain("Preliminary");
      if (SHOTS) await page.screenshot({ path: join(SHOTS, "view-open-run.png"), fullPage: true });
      // An attacked unsafe episode and its twin in the benign arm.
      const ep = rep.episodes.find((e) => e.arm !== "none" && e.unsafe === true) as Ep;
      const twin = rep.episodes.find(
        (e) => e.arm === "none" && e.task === ep.task && e.seed === ep.seed,
      ) as Ep;
      await page.locator(`tr[data-cell="${ep.cell}"] a.ep-link`).click();
      await page.waitForSelector('#app[data-frames-ready="1"]');
      expect(await page.locator("#side-episode h2").textContent()).toContain(ep.arm);
      expect(await page.locator("#side-twin h2").textContent()).toContain("none");
      expect(await page.locator("#side-twin .small.muted").first().textContent()).toContain(
        twin.cell,
      );
      // The recorded steps drive the timeline and actions; frames say why they are not replayed.
      expect(
        await page.locator('#timeline [data-track="0-combined"] span').count(),
      ).toBeGreaterThan(0);
      expect(await page.locator("#actions tbody tr").count()).toBe(2);
      expect(await page.locator("#players-0").textContent()).toContain("provael view");
      if (SHOTS)
        await page.screenshot({ path: join(SHOTS, "view-open-episode.png"), fullPage: true });
      // A second run of the plan: the two compared under the regression gate.
      await page.locator("#open-dir").setInputFiles(B);
      await page.waitForFunction(() => document.querySelectorAll("#runs tr.run-row").length === 2);
      await page.locator("input.pick").nth(0).check();
      await page.locator("input.pick").nth(1).check();
      await page.locator("#compare-btn").click();
      await page.waitForSelector("#changed");
      expect(await page.locator("#gate").textContent()).toContain("Regression gate");
      expect(problems, problems.join("\n")).toEqual([]);
      local(requests);
      await page.close();
    });

    it.skipIf(!hasFfmpeg)(
      "plays a dropped run's showcase clip on its pair's episode page, from the dropped file",
      async () => {
        const info = JSON.parse(readFileSync(join(B, "clips", "showcase.json"), "utf8")) as {
          attacked: string;
          width: number;
        };
        const { page, requests, problems } = await open();
        await page.locator("#open-dir").setInputFiles(B);
        await page.waitForSelector("#runs tr.run-row");
        const id = await page.locator("#runs tr.run-row").first().getAttribute("data-run");
        await page.evaluate((h) => {
          location.hash = h;
        }, `#/run/${id}/episode/${info.attacked}`);
        await page.waitForSelector("#showcase-clip-box");
        await page.locator("#showcase-clip-box summary").click();
        await page.waitForFunction(
          () =>
            ((document.querySelector("video#showcase-clip") as HTMLVideoElement | null)
              ?.readyState ?? 0) >= 1,
          undefined,
          // A safety net: the clip's metadata loads in well under a second on a quiet machine.
          { timeout: 60_000 },
        );
        expect(
          await page.evaluate(
            () => (document.querySelector("video#showcase-clip") as HTMLVideoElement).videoWidth,
          ),
        ).toBe(info.width);
        expect(await page.locator("video#showcase-clip").getAttribute("src")).toMatch(/^blob:/);
        expect(problems, problems.join("\n")).toEqual([]);
        local(requests);
        await page.close();
      },
    );

    it("shows a run in progress with its episodes so far, marked in progress and partial", async () => {
      const lines = readFileSync(join(A, "journal.jsonl"), "utf8").split("\n").filter(Boolean);
      const kept = lines.slice(1, 1 + Math.floor((lines.length - 1) / 2));
      mkdirSync(C, { recursive: true });
      // A run killed mid-write: the header, half the episodes, and half of the next line.
      writeFileSync(
        join(C, "journal.jsonl"),
        `${[lines[0], ...kept].join("\n")}\n${lines[kept.length + 1]?.slice(0, 40)}`,
      );
      const episodes = kept.map((l) => (JSON.parse(l) as { record: Ep }).record);
      const planned = report(A).episodes.length;
      const ep = episodes.find(
        (e) =>
          e.arm !== "none" &&
          episodes.some((t) => t.arm === "none" && t.task === e.task && t.seed === e.seed),
      ) as Ep;
      expect(ep).toBeDefined();
      const { page, requests, problems } = await open();
      await page.locator("#open-dir").setInputFiles(C);
      await page.waitForSelector("#runs tr.run-row");
      const row = page.locator("#runs tr.run-row").first();
      expect(await row.locator(".badge.running").textContent()).toBe("in progress");
      expect(await row.textContent()).toContain(`${episodes.length}/${planned}`);
      await row.locator("a.run-link").click();
      await page.waitForSelector("#arms");
      expect(await page.locator("#live").textContent()).toContain(
        `In progress: ${episodes.length}/${planned} episodes`,
      );
      expect(await page.locator("#partial").textContent()).toContain("partial");
      expect(await page.locator("#episodes tr.ep-row").count()).toBe(episodes.length);
      await page.locator(`tr[data-cell="${ep.cell}"] a.ep-link`).click();
      await page.waitForSelector('#app[data-frames-ready="1"]');
      expect(await page.locator("#side-episode h2").textContent()).toContain(ep.arm);
      expect(await page.locator("#side-twin h2").textContent()).toContain("none");
      // Its steps come from the journal.
      expect(
        await page.locator('#timeline [data-track="0-combined"] span').count(),
      ).toBeGreaterThan(0);
      expect(problems, problems.join("\n")).toEqual([]);
      local(requests);
      await page.close();
    });

    it("replays a dropped tabletop run's attacked episode and its twin in the playground's copy of the page", async () => {
      const t = runCli(
        [
          "attack",
          "--policy",
          "scripted",
          "--suite",
          "tabletop",
          "--tasks",
          "kitchen_red_block_by_knife",
          "--attacks",
          "none,trajectory_hijack",
          "--seeds",
          "1",
          "--workers",
          "1",
          "--no-html",
          "--out",
          T,
        ],
        { timeoutMs: 300_000 },
      );
      expect(t.code, t.stderr).toBe(0);
      expect(existsSync(join(T, "frames"))).toBe(false);
      const w = runCli(["playground", "--out", playground]);
      expect(w.code, w.stderr).toBe(0);
      const asked: string[] = [];
      const pg = await serveSite(playground, 0, (method, url) => asked.push(`${method} ${url}`));
      try {
        const { page, requests, problems } = await open(`${pg.url}viewer/open.html`);
        await page.locator("#open-dir").setInputFiles(T);
        await page.waitForSelector("#runs tr.run-row");
        await page.locator("#runs a.run-link").click();
        await page.waitForSelector("#arms");
        const rep = report(T);
        const ep = rep.episodes.find((e) => e.arm === "trajectory_hijack") as Ep;
        const twin = rep.episodes.find((e) => e.arm === "none") as Ep;
        await page.locator(`tr[data-cell="${ep.cell}"] a.ep-link`).click();
        // A safety net: the replay takes seconds on a quiet machine.
        await page.waitForSelector('#app[data-frames-ready="1"]', { timeout: 240_000 });
        for (const side of ["#players-0", "#players-1"]) {
          const text = (await page.locator(side).textContent()) ?? "";
          expect(text, side).toContain("Replayed in this page from the episode's recorded actions");
          // The replay reproduced the recorded endpoints and path.
          expect(text, side).not.toContain("differs from the recorded episode");
          expect(await page.locator(`${side} img.frame`).count(), side).toBeGreaterThan(0);
        }
        expect(await page.locator("#side-twin .small.muted").first().textContent()).toContain(
          twin.cell,
        );
        await page.waitForFunction(() =>
          [...document.querySelectorAll("#players-0 img.frame, #players-1 img.frame")].every(
            (i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0,
          ),
        );
        expect(await page.locator("#players-0 img.frame").first().getAttribute("src")).toMatch(
          /^blob:/,
        );
        // Scrubbing the timeline shows another replayed step.
        const first = await page.locator("#players-0 img.frame").first().getAttribute("data-step");
        await page.evaluate(() => {
          const slider = document.querySelector("#step") as HTMLInputElement;
          slider.value = slider.max;
          slider.dispatchEvent(new Event("input", { bubbles: true }));
        });
        await page.waitForFunction(
          (s) => document.querySelector("#players-0 img.frame")?.getAttribute("data-step") !== s,
          first,
        );
        if (SHOTS)
          await page.screenshot({ path: join(SHOTS, "view-open-replay.png"), fullPage: true });
        expect(problems, problems.join("\n")).toEqual([]);
        // Every request went to the site's own files on this machine, or to the dropped files.
        for (const r of requests) {
          const [method, url] = r.split(" ") as [string, string];
          expect(method, r).toBe("GET");
          expect(
            url.startsWith(pg.url) ||
              url.startsWith("blob:http://127.0.0.1:") ||
              url.startsWith("data:"),
            r,
          ).toBe(true);
        }
        expect(asked).toContain("GET /replay.js");
        for (const a of asked) {
          const [method, path] = a.split(" ") as [string, string];
          expect(method, a).toBe("GET");
          expect(path, a).not.toContain("?");
          expect(existsSync(join(playground, decodeURIComponent(path))), a).toBe(true);
        }
        await page.close();
      } finally {
        await new Promise((ok) => pg.server.close(ok));
      }
    }, 600_000);

    it.skipIf(!hasZip)("opens a provael view --bundle zip with its frames", async () => {
      const bundle = join(root, "bundle");
      const r = runCli(["view", A, "--bundle", bundle, "--cache", join(root, "cache")]);
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(bundle, "open.html"))).toBe(true);
      const zip = join(root, "bundle.zip");
      expect(spawnSync("zip", ["-qr", zip, "."], { cwd: bundle }).status).toBe(0);
      const { page, requests, problems } = await open();
      await page.locator("#open-files").setInputFiles(zip);
      await page.waitForSelector("#runs tr.run-row");
      await page.locator("#runs a.run-link").click();
      await page.waitForSelector("#arms");
      const ep = report(A).episodes.find((e) => e.arm !== "none" && e.unsafe === true) as Ep;
      await page.locator(`tr[data-cell="${ep.cell}"] a.ep-link`).click();
      await page.waitForSelector('#app[data-frames-ready="1"]');
      await page.waitForFunction(() => {
        const i = document.querySelector("#players-0 img.frame") as HTMLImageElement | null;
        return Boolean(i?.complete) && (i?.naturalWidth ?? 0) > 0;
      });
      expect(await page.locator("#players-0 img.frame").first().getAttribute("src")).toMatch(
        /^blob:/,
      );
      expect(problems, problems.join("\n")).toEqual([]);
      local(requests);
      await page.close();
    });
  },
);
