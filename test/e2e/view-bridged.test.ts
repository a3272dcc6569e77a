/**
 * A bridged run in `provael view`: `provael attack --suite vla-eval` over the Python test peer
 * (test/peers/libero_peer.py, LIBERO-shaped, 256x256 PNG frames) in front of a served stub keeps
 * each episode's keyframes as the built-in suites' frames are kept, and the viewer's episode page
 * shows the attacked episode beside its benign twin with them, in real Chromium.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodePng } from "../../src/core/png.js";
import { startViewServer, type ViewServer } from "../../src/view/server.js";
import { CLI, runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const PYTHON = "/usr/bin/python3";
const PEER = join(import.meta.dirname, "..", "peers", "libero_peer.py");
/** One task, two episodes per arm. */
const PEER_CMD = `${PYTHON} ${PEER} --url {url} --tasks 1 --episodes 2 --timeout 30`;

interface Ep {
  cell: string;
  arm: string;
  task: string;
  seed: number;
  steps: number;
}

const children: ChildProcess[] = [];
const root = tempDir("provael-view-bridged-");
const runs = join(root, "runs");
const out = join(runs, "bridged");
let view: ViewServer;
let id = "";
let episodes: Ep[] = [];

beforeAll(async () => {
  const child = spawn(
    process.execPath,
    [CLI, "serve-policy", "--policy", "stub", "--protocol", "vla-eval", "--port", "0", "--json"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  const upstream = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout?.on("data", (d) => {
      text += d;
      const nl = text.indexOf("\n");
      if (nl >= 0) resolve((JSON.parse(text.slice(0, nl)) as { url: string }).url);
    });
    child.once("exit", (code) => reject(new Error(`serve-policy exited ${code}`)));
  });
  const r = runCli(
    [
      ...["attack", "--suite", "vla-eval", "--profile", "libero", "--policy", "vla-eval"],
      ...["--policy-url", upstream, "--attacks", "freeze", "--no-controls", "--out", out],
      ...["--preflight", "0", "--benchmark-command", PEER_CMD],
    ],
    { timeoutMs: 240_000 },
  );
  expect(r.code, r.stderr).toBe(0);
  episodes = (JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as { episodes: Ep[] })
    .episodes;
  view = await startViewServer({ dirs: [runs], cacheRoot: join(root, "cache") });
  const list = (await (await fetch(new URL("api/runs", view.url))).json()) as { id: string }[];
  id = list[0]?.id as string;
}, 300_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await view?.close();
  rmSync(root, { recursive: true, force: true });
});

const attacked = () => episodes.find((e) => e.arm === "freeze") as Ep;
const twinOf = (e: Ep) =>
  episodes.find((x) => x.arm === "none" && x.task === e.task && x.seed === e.seed) as Ep;

describe("a bridged run's keyframes", () => {
  it("are written for every episode: strided steps and the last, shrunk to 128 px", () => {
    expect(episodes.length).toBe(4);
    for (const e of episodes) {
      const files = readdirSync(join(out, "frames", e.cell)).sort();
      const steps = files.map((f) => Number(/-(\d+)\.png$/.exec(f)?.[1]));
      expect(files.every((f) => /^agentview-\d{4}\.png$/.test(f))).toBe(true);
      expect(steps[0]).toBe(0);
      expect(steps.at(-1)).toBe(e.steps - 1);
      expect(files.length).toBeLessThanOrEqual(9);
      const png = decodePng(readFileSync(join(out, "frames", e.cell, files[0] as string)));
      expect([png.width, png.height]).toEqual([128, 128]);
    }
  });

  it("are report.html's frames of its showcased pair", () => {
    const html = readFileSync(join(out, "report.html"), "utf8");
    const section = html.slice(
      html.indexOf("<h2>Camera frames</h2>"),
      html.indexOf("<h2>Predicates"),
    );
    expect(section).toContain("Benign twin (none)");
    expect(section).toContain("Attacked (freeze)");
    expect(section).toMatch(/<img src="data:image\/png;base64,/);
  });

  it("are what the view API gives for the episode and its twin, saying why no replay", async () => {
    for (const e of [attacked(), twinOf(attacked())]) {
      const res = await fetch(new URL(`api/runs/${id}/frames/${e.cell}`, view.url));
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        index: { source: string; cameras: string[]; steps: number[] } | null;
        reason: string | null;
      };
      expect(body.index).toMatchObject({ source: "run", cameras: ["agentview"] });
      expect(body.index?.steps.at(-1)).toBe(e.steps - 1);
      expect(body.reason).toMatch(/^only the frames the run saved are shown/);
    }
  });
});

describe.skipIf(!hasChromium)(
  `a bridged episode beside its benign twin in Chromium${hasChromium ? "" : ` (skipped: no browser at ${CHROMIUM})`}`,
  () => {
    it("shows the attacked episode's frames beside the twin's", async () => {
      const { chromium } = await import("playwright-core");
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run"],
      });
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        // Playwright's 30 s default is no safety net on a loaded 2-core machine: the test's limit governs.
        page.setDefaultTimeout(240_000);
        const problems: string[] = [];
        page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
        const ep = attacked();
        const twin = twinOf(ep);
        await page.goto(`${view.url}#/run/${id}/episode/${ep.cell}`);
        await page.waitForSelector('#app[data-frames-ready="1"]');
        for (const [side, cell] of [
          ["#players-0", ep.cell],
          ["#players-1", twin.cell],
        ] as const) {
          const img = page.locator(`${side} img.frame`).first();
          expect(await img.getAttribute("src")).toBe(
            `files/${id}/${cell}/agentview-${"0".repeat(4)}.png`,
          );
          await page.waitForFunction((sel) => {
            const i = document.querySelector(`${sel} img.frame`) as HTMLImageElement | null;
            return Boolean(i?.complete) && (i?.naturalWidth ?? 0) === 128;
          }, side);
        }
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
      }
    }, 120_000);
  },
);
