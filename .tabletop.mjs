import { suites } from "./dist/suites/index.js";
import { policies } from "./dist/policies/index.js";
import { tabletopSuite } from "./dist/suites/mujoco/tabletop.js";
import { scriptedPolicy } from "./dist/policies/scripted.js";
import { resolveAttacks } from "./dist/attacks/index.js";
import { runAttack } from "./dist/runner/run.js";
for (const [reg, item] of [[suites, tabletopSuite], [policies, scriptedPolicy]]) {
  if (!reg.has(item.id)) { reg.items.push(item); reg.byId.set(item.id, item); }
}
const out = process.argv[2];
const t = Date.now();
await runAttack({ plan: { policy: "scripted", suite: "tabletop", tasks: ["kitchen_red_block_by_knife", "kitchen_green_box_by_hand", "pantry_orange_cup_by_vase", "kitchen_yellow_can"], arms: resolveAttacks(["none", "control", "instruction"]), seed: 0, seeds: 6, repeats: 1, horizon: null, termination: "fixed-horizon", scenePin: 0, policyOptions: {}, attackParams: {}, calibration: {} }, out, resume: process.argv[3] === "resume", concurrency: 2, policyOptions: {}, commandLine: ["provael", "attack", "--policy", "scripted", "--suite", "tabletop"] });
console.log("done", (Date.now() - t) / 1000);
