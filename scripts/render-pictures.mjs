#!/usr/bin/env node
/**
 * Renders agent-view and wrist pictures of stored scenes to docs/images/ with the ray camera:
 * a kitchen and a pantry scene (tabletop-scene0-*.png, tabletop-scene1-*.png; the pantry scene is
 * one where the glass vase hides nothing from the agent view), the kitchen scene with the gripper
 * at its grasp (tabletop-grasp-*.png) and a reach scene (reach-scene0-*.png).
 *
 *   npm run build && node scripts/render-pictures.mjs --help   # its options
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { encodePng } from "../dist/core/png.js";
import { scriptedPolicy } from "../dist/policies/scripted.js";
import { createReachSuite } from "../dist/suites/mujoco/reach.js";
import { createTabletopSuite } from "../dist/suites/mujoco/tabletop.js";
import { parseScriptArgs } from "../research/script-args.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "docs", "images");
const USAGE = `usage: node scripts/render-pictures.mjs [--size 256]`;
const values = parseScriptArgs("render-pictures", USAGE, {
  size: { type: "string", default: "256" },
});
const size = Number(values.size);
mkdirSync(OUT, { recursive: true });

function save(prefix, images) {
  for (const [camera, image] of Object.entries(images)) {
    const file = join(OUT, `${prefix}-${camera}.png`);
    writeFileSync(file, encodePng(image));
    console.log(`wrote ${file}`);
  }
}

const render = { enabled: true, width: size, height: size };
const tabletop = await createTabletopSuite({ render }).open();
const shots = [
  { prefix: "tabletop-scene0", task: "kitchen_red_block_by_knife", scene: 0 },
  { prefix: "tabletop-scene1", task: "pantry_red_block", scene: 6 },
];
for (const shot of shots)
  save(
    shot.prefix,
    (await tabletop.reset({ task: shot.task, scene: shot.scene, seed: 0 })).obs.images,
  );

// The expert mid-task: step until the gripper has closed on the object.
const expert = await scriptedPolicy.load({});
expert.reset({ task: "kitchen_red_block_by_knife", seed: 0, policySeed: 0 });
let result = await tabletop.reset({ task: "kitchen_red_block_by_knife", scene: 0, seed: 0 });
for (let step = 0; step < 200; step++) {
  result = await tabletop.step(await expert.act(result.obs));
  const block = result.state.objects?.red_block?.pos[2] ?? 0;
  if (block > 0.86) break;
}
save("tabletop-grasp", result.obs.images);
await tabletop.close();

const reach = await createReachSuite({ render }).open();
save("reach-scene0", (await reach.reset({ task: "reach_red", scene: 0, seed: 0 })).obs.images);
await reach.close();
