// The playground beside the CLI on this machine: the site's size (gzip, brotli; weights and
// WASM included), time to the first camera frame, and episodes per second in Chromium with 1 and
// 2 Web Workers beside `provael attack` with 1 and 2 worker threads on the same small plan.
// Goal: the page at 0.7x or more of the CLI per worker. Needs Debian's chromium; `npm run bench
// playground`.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { serveSite } from "../dist/playground/site.js";

const CHROMIUM = "/usr/bin/chromium";
const PLAN = [
  "--tasks",
  "kitchen_red_block_by_knife",
  "--attacks",
  "none,trajectory_hijack,random_offset",
  "--seeds",
  "2",
];
const EPISODES = 6;
const root = mkdtempSync(join(tmpdir(), "provael-pg-bench-"));
const cli = join(import.meta.dirname, "..", "dist", "cli", "main.js");

function size(dir) {
  let raw = 0,
    gz = 0,
    br = 0;
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const b = readFileSync(p);
        raw += b.length;
        gz += gzipSync(b, { level: 9 }).length;
        br += brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
      }
    }
  };
  walk(dir);
  return { raw, gz, br };
}

try {
  const site = join(root, "site");
  spawnSync(process.execPath, [cli, "playground", "--out", site], { stdio: "ignore" });
  const s = size(site);
  console.log(
    `site: ${(s.raw / 1e6).toFixed(1)} MB, gzip ${(s.gz / 1e6).toFixed(1)} MB, brotli ${(s.br / 1e6).toFixed(1)} MB (weights, MJCF and WASM included)`,
  );

  const cliRate = {};
  for (const workers of [1, 2]) {
    const t = performance.now();
    spawnSync(
      process.execPath,
      [
        cli,
        "attack",
        ...PLAN,
        "--workers",
        String(workers),
        "--no-html",
        "--out",
        join(root, `cli-${workers}`),
      ],
      { stdio: "ignore" },
    );
    const sec = (performance.now() - t) / 1000;
    cliRate[workers] = EPISODES / sec;
    console.log(
      `cli --workers ${workers}: ${EPISODES} episodes in ${sec.toFixed(1)} s = ${cliRate[workers].toFixed(3)} episodes/s (process start and model load included)`,
    );
  }

  if (!existsSync(CHROMIUM)) console.log("no chromium: page figures skipped");
  else {
    const { server, url } = await serveSite(site);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--headless", "--disable-gpu"],
    });
    try {
      for (const workers of [1, 2]) {
        const page = await browser.newPage();
        const q = new URLSearchParams({
          tasks: PLAN[1],
          attacks: PLAN[3],
          seeds: PLAN[5],
          workers: String(workers),
          autostart: "1",
        });
        const t = performance.now();
        await page.goto(`${url}?${q}`);
        await page.waitForSelector("#digest", { timeout: 1_800_000 });
        const sec = (performance.now() - t) / 1000;
        const first = Number(await page.getAttribute("#status", "data-first-frame"));
        const rate = EPISODES / sec;
        console.log(
          `page, ${workers} Web Worker(s): ${EPISODES} episodes in ${sec.toFixed(1)} s = ${rate.toFixed(3)} episodes/s (${(rate / cliRate[workers]).toFixed(2)}x the CLI with ${workers}); first frame ${first.toFixed(1)} s after play`,
        );
        await page.close();
      }
    } finally {
      await browser.close();
      server.close();
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
