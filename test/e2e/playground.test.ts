/**
 * The playground in Debian's Chromium (headless, driven by playwright-core as the viewer's tests
 * are): the site `provael playground` writes, served on 127.0.0.1, plays a small `attack` plan
 * in a Web Worker; its report.json is compared with the CLI's for the same plan, and every
 * request the page makes is recorded.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveSite } from "../../src/playground/site.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const CHROMIUM = "/usr/bin/chromium";
const PLAN = {
  tasks: "kitchen_red_block_by_knife",
  attacks: "none,trajectory_hijack,random_offset",
  seeds: "2",
};
const root = tempDir("provael-playground-");
const sha = (b: string | Buffer) => createHash("sha256").update(b).digest("hex");
/** Set to a folder (e.g. docs/images) to save a screenshot of the page mid-run. */
const SCREENSHOTS = process.env.PROVAEL_SCREENSHOTS;

interface Played {
  report: string;
  digestShown: string;
  command: string;
  requests: string[];
  problems: string[];
  origin: string;
  /** The cameras of the episode in progress, drawn while the page played: [camera, pixels lit]. */
  live: [string, number][];
}

describe.skipIf(!existsSync(CHROMIUM))("the playground in Chromium", () => {
  let played: Played;
  let cli: string;
  let server: Server | undefined;

  beforeAll(async () => {
    // The suite's global setup runs tsc only: bundle the page from the sources being tested.
    execFileSync(process.execPath, [
      join(import.meta.dirname, "..", "..", "scripts", "build-playground.mjs"),
    ]);
    const site = join(root, "site");
    const w = runCli(["playground", "--out", site]);
    expect(w.code, w.stderr).toBe(0);
    const run = join(root, "cli-run");
    const c = runCli([
      "attack",
      "--tasks",
      PLAN.tasks,
      "--attacks",
      PLAN.attacks,
      "--seeds",
      PLAN.seeds,
      "--no-html",
      "--out",
      run,
    ]);
    expect(c.code, c.stderr).toBe(0);
    cli = readFileSync(join(run, "report.json"), "utf8");

    const served = await serveSite(site);
    server = served.server;
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run"],
    });
    try {
      const page = await browser.newPage({ acceptDownloads: true });
      const requests: string[] = [];
      const problems: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
      page.on("worker", (wk) => requests.push(wk.url()));
      const q = new URLSearchParams({ ...PLAN, workers: "1", autostart: "1" });
      await page.goto(`${served.url}?${q}`);
      // While it plays: every camera of the episode in progress, drawn from the worker's frames.
      await page.waitForSelector("#views canvas[data-camera]", { timeout: 600_000 });
      await page.waitForFunction(
        () => document.querySelectorAll("#views canvas[data-camera]").length >= 2,
        undefined,
        { timeout: 600_000 },
      );
      const live = await page.$$eval("#views canvas[data-camera]", (cs) =>
        (cs as HTMLCanvasElement[]).map((c): [string, number] => {
          const px = c.getContext("2d")?.getImageData(0, 0, c.width, c.height).data ?? [];
          let lit = 0;
          for (let i = 0; i < px.length; i += 4)
            if ((px[i] ?? 0) + (px[i + 1] ?? 0) + (px[i + 2] ?? 0) > 0) lit++;
          return [c.dataset.camera ?? "", lit];
        }),
      );
      if (SCREENSHOTS)
        await page.screenshot({
          path: join(SCREENSHOTS, "playground-running.png"),
          fullPage: true,
        });
      await page.waitForSelector("#digest", { timeout: 1_200_000 });
      const download = page.waitForEvent("download");
      await page.click("#dl-report\\.json");
      const file = await (await download).path();
      played = {
        report: readFileSync(file, "utf8"),
        digestShown: (await page.textContent("#digest")) ?? "",
        command: (await page.textContent("#command")) ?? "",
        requests,
        problems,
        origin: served.url,
        live,
      };
    } finally {
      await browser.close();
    }
  }, 1_800_000);

  afterAll(() => {
    server?.close();
  });

  it("plays the plan with no page error and shows the CLI command of the same plan", () => {
    expect(played.problems).toEqual([]);
    expect(played.command).toBe(
      `provael attack --tasks ${PLAN.tasks} --attacks ${PLAN.attacks} --seeds ${PLAN.seeds} --out run`,
    );
    expect(played.digestShown).toBe(`sha256:${sha(played.report)}`);
  });

  it("shows every camera of the episode in progress while it plays", () => {
    expect(played.live.map(([camera]) => camera).sort()).toEqual(["agentview", "wrist"]);
    for (const [camera, lit] of played.live) expect(lit, camera).toBeGreaterThan(1000);
  });

  it("no request leaves 127.0.0.1", () => {
    expect(played.requests.length).toBeGreaterThan(5);
    const foreign = played.requests.filter(
      (u) => !u.startsWith(played.origin) && !u.startsWith("blob:") && !u.startsWith("data:"),
    );
    expect(foreign).toEqual([]);
  });

  it("report.json records the CLI's plan, arms and every episode's outcome", () => {
    const page = JSON.parse(played.report);
    const ref = JSON.parse(cli);
    expect(page.run).toEqual(ref.run);
    expect(page.summary).toEqual(ref.summary);
    const outcome = (r: typeof ref) =>
      r.episodes.map((e: Record<string, unknown>) => [
        e.cell,
        e.unsafe,
        e.task_success,
        e.first_unsafe_step,
        e.delivered,
        e.received_digest,
      ]);
    expect(outcome(page)).toEqual(outcome(ref));
  });

  // The bytes differ from the first episode's step 10 on (pose[1], last bit, the action the
  // same): not tfjs (both hosts load the SIMD .wasm) nor MuJoCo's WebAssembly (it imports no JS
  // Math); the controller's JavaScript math is what is left (docs/playground.md). When the cause
  // is removed this starts to fail: make it a plain `it` then.
  it.fails("report.json is byte for byte the CLI's (not yet: host math differs)", () => {
    expect(sha(played.report)).toBe(sha(cli));
  });
});
