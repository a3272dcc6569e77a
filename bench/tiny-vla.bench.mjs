// Milliseconds per tiny-vla inference step (one network call on two 128x128 cameras, as `act`
// does when it replans) and per 10-step PGD-like gradient call (ten input gradients and sign
// steps on the agent-view image). Run after `npm run build`: node bench/tiny-vla.bench.mjs [WEIGHTS_DIR]
// (default: the shipped weights), e.g. to compare a newly trained model with the shipped one.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Rng } from "../dist/core/rng.js";
import { defaultConfig, initWeights, parameterCount } from "../dist/policies/tiny-vla/model.js";
import { TinyVlaInstance, tinyVlaPolicy } from "../dist/policies/tiny-vla/policy.js";
import { TinyVlaRuntime } from "../dist/policies/tiny-vla/runtime.js";
import { syntheticInstructions, syntheticScene } from "../dist/policies/tiny-vla/synthetic.js";
import { Tokenizer } from "../dist/policies/tiny-vla/tokenizer.js";
import { SHIPPED_WEIGHTS_DIR } from "../dist/policies/tiny-vla/weights.js";

const STEPS = 200;
const PGD_CALLS = 10;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

let inst;
let which;
const given = process.argv[2];
if (given) {
  inst = await tinyVlaPolicy.load({ path: given, extra: { replan: 1 } });
  which = `weights ${given} ${inst.digest.slice(0, 19)}…`;
} else if (existsSync(join(SHIPPED_WEIGHTS_DIR, "weights.bin"))) {
  inst = await tinyVlaPolicy.load({ extra: { replan: 1 } });
  which = `shipped weights ${inst.digest.slice(0, 19)}…`;
} else {
  // Without shipped weights, an untrained network of the default shape costs the same.
  const tok = Tokenizer.build(syntheticInstructions(), 16);
  const cfg = defaultConfig(tok.size, {
    stateMean: new Array(11).fill(0),
    stateStd: new Array(11).fill(1),
    actionScale: new Array(7).fill(1),
  });
  const rt = await TinyVlaRuntime.create({
    config: cfg,
    text: tok,
    weights: initWeights(cfg, Rng.fromLabel("bench")),
  });
  inst = new TinyVlaInstance(rt, "untrained", 1);
  which = "untrained default-shape network (no shipped weights)";
}
const cfg = inst.runtime.config;
console.log(
  `tiny-vla: ${parameterCount(cfg)} parameters, input ${cfg.imageSize}x${cfg.imageSize}, ${which}`,
);

const obs = syntheticScene("bench").obs;
inst.reset({ task: "bench", seed: 0, policySeed: 0 });
for (let i = 0; i < 20; i++) inst.act(obs);
const times = [];
for (let i = 0; i < STEPS; i++) {
  const t0 = performance.now();
  inst.act(obs);
  times.push(performance.now() - t0);
}
console.log(
  `inference: ${median(times).toFixed(2)} ms per step (median of ${STEPS}, replan 1: one network call per step)`,
);

// A PGD-like loop: gradient, signed step inside an L-infinity ball of 8/255 on the pixels.
const img = obs.images.agentview;
const base = Float32Array.from(img.data);
const pgd = [];
for (let call = 0; call < PGD_CALLS; call++) {
  const x = Float32Array.from(base);
  const t0 = performance.now();
  for (let k = 0; k < 10; k++) {
    const adv = {
      ...obs,
      images: {
        ...obs.images,
        agentview: {
          ...img,
          data: Uint8Array.from(x, (v) => Math.max(0, Math.min(255, Math.round(v)))),
        },
      },
    };
    const { grad } = await inst.differentiable.inputGradient(adv, "agentview", [1, 0, 0]);
    for (let i = 0; i < x.length; i++) {
      const v = x[i] + 2 * Math.sign(grad[i]);
      x[i] = Math.max(base[i] - 8, Math.min(base[i] + 8, v));
    }
  }
  pgd.push(performance.now() - t0);
}
console.log(
  `gradient: ${median(pgd).toFixed(1)} ms per 10-step PGD call on a 128x128 camera (median of ${PGD_CALLS})`,
);
inst.close();
