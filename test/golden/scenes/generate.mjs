#!/usr/bin/env node
/**
 * Reference digests of the MuJoCo suites' scenes (test/golden/scenes/digests.json).
 *
 *   npm run build && node test/golden/scenes/generate.mjs
 *
 * Scenes 0-99 of every task were stored as data until the suites began generating them; their
 * digests come from those files as committed (git object e612429:assets/scenes/<suite>.json), so
 * the test proves the generator reproduces them exactly. A few later indices freeze the
 * generator itself: a change that alters them changes every run on those scenes.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { digestJson } from "../../../dist/core/digest.js";
import { reachScenes } from "../../../dist/suites/mujoco/reach.js";
import { tabletopScenes } from "../../../dist/suites/mujoco/tabletop.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const STORED_AT = "e612429";
const LATER = [100, 1000, 1999, 5000, 9999];

const out = { stored_at: STORED_AT, suites: {} };
for (const [suite, source] of [
  ["tabletop", tabletopScenes()],
  ["reach", reachScenes()],
]) {
  const stored = JSON.parse(
    execFileSync("git", ["show", `${STORED_AT}:assets/scenes/${suite}.json`], {
      cwd: HERE,
      encoding: "utf8",
      maxBuffer: 1 << 26,
    }),
  );
  const tasks = {};
  for (const [task, scenes] of Object.entries(stored.tasks)) {
    const later = {};
    for (const i of LATER) later[i] = digestJson(await source.placement(task, i));
    tasks[task] = { stored: scenes.map((s) => digestJson(s)), later };
  }
  out.suites[suite] = tasks;
  await source.close();
}
writeFileSync(join(HERE, "digests.json"), `${JSON.stringify(out, null, 1)}\n`);
