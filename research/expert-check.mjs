#!/usr/bin/env node
/**
 * Runs the scripted expert on the first N stored scenes of every task, without rendering, and
 * prints a per-task table: task success, unsafe episodes per predicate, and mean steps to success.
 *
 *   npm run build && node research/expert-check.mjs --help   # its options
 */
import { scriptedPolicy } from "../dist/policies/scripted.js";
import { createReachSuite } from "../dist/suites/mujoco/reach.js";
import { createTabletopSuite } from "../dist/suites/mujoco/tabletop.js";
import { parseScriptArgs } from "./script-args.mjs";

const USAGE = `usage: node research/expert-check.mjs [--suite tabletop|reach] [--scenes 50] [--first 0] [--task id] [--verbose]`;
const values = parseScriptArgs("expert-check", USAGE, {
  suite: { type: "string", default: "tabletop" },
  scenes: { type: "string", default: "50" },
  first: { type: "string", default: "0" },
  task: { type: "string" },
  verbose: { type: "boolean", default: false },
});
const make = values.suite === "reach" ? createReachSuite : createTabletopSuite;
const suite = make({ render: { enabled: false } });
const sim = await suite.open();
const expert = await scriptedPolicy.load({});
const first = Number(values.first);
const count = Number(values.scenes);
const rows = [];
const started = performance.now();
for (const task of suite.tasks()) {
  if (values.task && task.id !== values.task) continue;
  const predicates = suite.predicates(task.id);
  let successes = 0;
  let stepsToSuccess = 0;
  const unsafe = Object.fromEntries(predicates.map((p) => [p.id, 0]));
  const failures = [];
  const n = Math.min(count, task.scenes - first);
  for (let scene = first; scene < first + n; scene++) {
    let result = await sim.reset({ task: task.id, scene, seed: scene });
    expert.reset({ task: task.id, seed: scene, policySeed: 0 });
    let success = -1;
    const hit = new Set();
    for (let step = 0; step < task.horizon; step++) {
      result = await sim.step(await expert.act(result.obs));
      for (const p of predicates) {
        const j = p.evaluate(result.state);
        if (j.unsafe && !hit.has(p.id)) {
          hit.add(p.id);
          if (values.verbose)
            console.log(`  ${task.id} #${scene} step ${step}: ${p.id} ${j.detail ?? ""}`);
        }
      }
      if (result.taskSuccess && success < 0) success = step + 1;
    }
    if (success > 0) {
      successes++;
      stepsToSuccess += success;
    } else failures.push(scene);
    for (const id of hit) unsafe[id] = (unsafe[id] ?? 0) + 1;
  }
  rows.push({
    task: task.id,
    n,
    successes,
    meanSteps: successes ? stepsToSuccess / successes : null,
    unsafe,
    failures,
  });
  console.log(
    `${task.id.padEnd(32)} ${String(successes).padStart(3)}/${n}  ${((100 * successes) / n).toFixed(0).padStart(3)}%  steps ${(successes ? stepsToSuccess / successes : 0).toFixed(0).padStart(4)}  unsafe ${JSON.stringify(unsafe)}${failures.length ? `  failed: ${failures.join(",")}` : ""}`,
  );
}
await sim.close();
const total = rows.reduce((a, r) => a + r.successes, 0);
const episodes = rows.reduce((a, r) => a + r.n, 0);
console.log(
  `\nall tasks: ${total}/${episodes} (${((100 * total) / episodes).toFixed(1)}%) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
console.log(
  "\n| task | success | rate | mean steps | " +
    Object.keys(rows[0]?.unsafe ?? {})
      .map((k) => `unsafe: ${k}`)
      .join(" | ") +
    " |",
);
console.log(
  "| --- | --- | --- | --- | " +
    Object.keys(rows[0]?.unsafe ?? {})
      .map(() => "---")
      .join(" | ") +
    " |",
);
for (const r of rows) {
  console.log(
    `| ${r.task} | ${r.successes}/${r.n} | ${((100 * r.successes) / r.n).toFixed(0)}% | ${r.meanSteps === null ? "-" : r.meanSteps.toFixed(0)} | ${Object.values(r.unsafe).join(" | ")} |`,
  );
}
