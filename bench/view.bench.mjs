// The viewer on a 3,000-episode run: how long the API answers and the pages take to render in
// Chromium (served and from a bundle). The run is a real stub run (3 tasks × 9 arms × 112
// seeds); its episodes and trajectories are what a tabletop run of that size holds, only the
// physics is skipped. `node bench/view.bench.mjs [seeds]` (after `npm run build`).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist", "cli", "main.js");
const { startViewServer } = await import(join(root, "dist", "view", "server.js"));
const seeds = Number(process.argv[2] ?? 112);
const dir = mkdtempSync(join(tmpdir(), "provael-view-bench-"));
const run = join(dir, "run");
const cache = join(dir, "cache");
const CHROMIUM = "/usr/bin/chromium";

const t0 = performance.now();
const played = spawnSync(
  process.execPath,
  [
    cli,
    "attack",
    "--suite",
    "stub",
    "--policy",
    "stub",
    "--attacks",
    "none,instruction",
    "--seeds",
    String(seeds),
    "--no-html",
    "--out",
    run,
  ],
  { encoding: "utf8" },
);
if (played.status !== 0) throw new Error(played.stderr);
const report = JSON.parse((await import("node:fs")).readFileSync(join(run, "report.json"), "utf8"));
const n = report.episodes.length;
console.log(
  `run: ${n} episodes, ${report.run.arms.length} arms, played in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

const view = await startViewServer({ dirs: [run], cacheRoot: cache });
const time = async (label, path) => {
  const a = performance.now();
  const res = await fetch(new URL(path, view.url));
  const body = await res.text();
  const ms = performance.now() - a;
  console.log(`${label}: ${ms.toFixed(0)} ms (${(body.length / 1024).toFixed(0)} KiB)`);
  return JSON.parse(body);
};
// The first read validates every file; later reads hit the cache until a file changes.
const runs = await time("api/runs (first read, validates report.json)", "api/runs");
await time("api/runs (cached)", "api/runs");
const id = runs[0].id;
await time("api/runs/<id> (report and 3,000 episode rows)", `api/runs/${id}`);
const cell = report.episodes.find((e) => e.unsafe && e.arm !== "none").cell;
await time("api/runs/<id>/episode/<cell> (pair and its steps)", `api/runs/${id}/episode/${cell}`);
// Later episodes of the same run: the trajectories' line index is built by the first request,
// so each of these reads only its pair's lines instead of scanning the whole file again.
{
  const others = report.episodes.filter((e) => e.arm !== "none").slice(-5);
  const a = performance.now();
  for (const e of others)
    await (await fetch(new URL(`api/runs/${id}/episode/${e.cell}`, view.url))).text();
  console.log(
    `api/runs/<id>/episode/<cell> (5 more episodes, mean): ${((performance.now() - a) / others.length).toFixed(0)} ms`,
  );
}
await time("api/runs/<id>/frames/<cell> (replay, uncached)", `api/runs/${id}/frames/${cell}`);

if (existsSync(CHROMIUM)) {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--headless", "--disable-gpu"],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const load = async (label, url, selector) => {
    const a = performance.now();
    await page.goto(url);
    await page.waitForSelector(selector);
    console.log(`${label}: ${(performance.now() - a).toFixed(0)} ms`);
  };
  await load("page: runs (served)", view.url, "#runs tr.run-row");
  await load(
    "page: run with 3,000 episodes (served)",
    `${view.url}#/run/${id}`,
    "#episodes tr.ep-row",
  );
  await load(
    "page: run, filtered to unsafe (served)",
    `${view.url}#/run/${id}?unsafe=1`,
    "#episodes tr.ep-row",
  );
  await load(
    "page: episode pair, frames cached (served)",
    `${view.url}#/run/${id}/episode/${cell}`,
    '#app[data-frames-ready="1"]',
  );
  const bundle = join(dir, "bundle");
  const b = spawnSync(process.execPath, [cli, "view", run, "--bundle", bundle, "--cache", cache], {
    encoding: "utf8",
  });
  if (b.status !== 0) throw new Error(b.stderr);
  console.log(b.stdout.trim());
  await load(
    "page: run with 3,000 episodes (bundle, file://)",
    `file://${join(bundle, "index.html")}#/run/${id}`,
    "#episodes tr.ep-row",
  );
  await browser.close();
} else console.log(`no browser at ${CHROMIUM}: page loads not measured`);
await view.close();
rmSync(dir, { recursive: true, force: true });
