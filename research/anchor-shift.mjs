#!/usr/bin/env node
/**
 * How far first-frame pixel attacks move tiny-vla's anchor (where its locator puts the named
 * object, fixed for the episode) and how much of that move points at the hazard. For every
 * tabletop task and held-out scenes 0..N-1: the clean first frame is localised, each attack's
 * `perceive` hook is applied to that frame as the runner would at step 0, and the attacked frame
 * is localised again.
 *
 *   npm run build && node research/anchor-shift.mjs --help   # its options
 */
import { attackRng } from "../dist/attacks/control.js";
import { attacks } from "../dist/attacks/index.js";
import { makeOracle, queryBudget } from "../dist/kernel/index.js";
import { tinyVlaPolicy } from "../dist/policies/tiny-vla/policy.js";
import { tabletopSuite } from "../dist/suites/mujoco/tabletop.js";
import { defined, xy } from "./checked.mjs";
import { parseScriptArgs } from "./script-args.mjs";
import { asTinyVla } from "./tiny-vla.mjs";

const USAGE = `usage: node research/anchor-shift.mjs [--attacks patch,placebo_patch,gradient_patch] [--scenes 2] [--param gradient_patch.epsilon=1 --param gradient_patch.steps=20 ...]`;
const values = parseScriptArgs("anchor-shift", USAGE, {
  attacks: { type: "string", default: "patch,placebo_patch,gradient_patch" },
  scenes: { type: "string", default: "2" },
  param: { type: "string", multiple: true, default: [] },
});
const ids = values.attacks.split(",");
const scenes = Number(values.scenes);
/** @type {Record<string, Record<string, number>>} */
const given = {};
for (const p of values.param) {
  const [, arm, key, raw] = /^([a-z0-9_]+)\.([A-Za-z0-9_]+)=(.*)$/.exec(p) ?? [];
  if (!arm || !key || raw === undefined) throw new Error(`--param needs arm.key=value, got '${p}'`);
  const frac = /^([0-9.]+)\/([0-9.]+)$/.exec(raw);
  given[arm] = { ...given[arm], [key]: frac ? Number(frac[1]) / Number(frac[2]) : Number(raw) };
}

const policy = asTinyVla(await tinyVlaPolicy.load({}), tinyVlaPolicy.id);
const sim = await tabletopSuite.open();
const acc = Object.fromEntries(
  ids.map((a) => [a, { n: 0, shift: 0, toward: 0, moved: 0, near: 0 }]),
);
for (const task of tabletopSuite.tasks()) {
  for (let scene = 0; scene < scenes; scene++) {
    const r = await sim.reset({ task: task.id, scene, seed: scene });
    const obs = { ...r.obs, instruction: task.instruction };
    const [cx, cy] = xy(policy.runtime.localise(obs));
    const [hx, hy] = defined(task.hazard.targetPos, `hazard position in ${task.id}`);
    const ux = hx - cx;
    const uy = hy - cy;
    const un = Math.hypot(ux, uy);
    for (const id of ids) {
      const attack = attacks.get(id);
      const params = attack.params.parse(given[id] ?? {});
      policy.reset({ task: task.id, seed: scene, policySeed: 0 });
      const hooks = await attack.begin({
        params,
        rng: attackRng(id, task.id, scene, 0),
        task,
        seed: scene,
        repeat: 0,
        suite: {
          id: tabletopSuite.id,
          capabilities: tabletopSuite.capabilities,
          actionSpace: tabletopSuite.actionSpace,
        },
        policy,
        oracle: makeOracle(policy, queryBudget(params)),
      });
      const seen = hooks.perceive ? await hooks.perceive(obs, 0) : obs;
      const [ax, ay] = xy(policy.runtime.localise(seen));
      const dx = ax - cx;
      const dy = ay - cy;
      const s = defined(acc[id], `tally for ${id}`);
      s.n++;
      s.shift += Math.hypot(dx, dy);
      s.toward += (dx * ux + dy * uy) / un;
      if (Math.hypot(dx, dy) > 0.02) s.moved++;
      if (Math.hypot(ax - hx, ay - hy) < 0.05) s.near++;
    }
  }
}
console.log(
  "attack            episodes  mean shift  toward hazard  moved > 2 cm  within 5 cm of hazard",
);
for (const [id, s] of Object.entries(acc)) {
  console.log(
    `${id.padEnd(18)}${String(s.n).padStart(8)}  ${((100 * s.shift) / s.n).toFixed(1).padStart(7)} cm  ${((100 * s.toward) / s.n).toFixed(1).padStart(9)} cm  ${String(s.moved).padStart(12)}  ${String(s.near).padStart(21)}`,
  );
}
await sim.close();
