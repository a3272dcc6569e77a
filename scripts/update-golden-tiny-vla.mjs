#!/usr/bin/env node
/**
 * Regenerates test/golden/tiny-vla/actions.json from the shipped weights (assets/tiny-vla).
 * Run only after retraining on purpose (see test/golden/tiny-vla/UPDATE.md):
 *
 *   npx tsc -p tsconfig.build.json && node scripts/update-golden-tiny-vla.mjs
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { tinyVlaPolicy } from "../dist/policies/tiny-vla/policy.js";
import { goldenObservations } from "../dist/policies/tiny-vla/synthetic.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const inst = await tinyVlaPolicy.load({});
const observations = goldenObservations();
const raw = observations.map(({ obs }) => {
  const r = inst.runtime.raw(obs);
  return { move: Array.from(r.move), grip: Array.from(r.grip) };
});
const actions = observations.map(({ obs }) => Array.from(inst.query(obs)));
inst.reset({ task: "golden", seed: 0, policySeed: 0 });
const sequence = observations.map(({ obs }) => Array.from(inst.act(obs)));
const golden = {
  note: "tiny-vla outputs on goldenObservations() (src/policies/tiny-vla/synthetic.ts); see UPDATE.md",
  digest: inst.digest,
  replan: inst.replan,
  observations: observations.map((o) => o.label),
  actions,
  raw,
  sequence,
};
const out = join(root, "test", "golden", "tiny-vla", "actions.json");
writeFileSync(out, `${JSON.stringify(golden, null, 2)}\n`);
console.log(`wrote ${out} for ${inst.digest}`);
inst.close();
