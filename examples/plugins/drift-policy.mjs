// A policy as a plugin: steps along the `line` suite's axis to the goal its instruction names,
// with a small constant drift. State-only, deterministic, no weights.
// Run it with the suite: see line-suite.mjs.
import { definePolicy } from "provael";

const capabilities = {
  cameras: [],
  readsState: true,
  readsContext: false,
  privileged: false,
  actionDim: 1,
  chunk: 1,
  differentiable: false,
  weights: false,
  stochastic: false,
  actionHead: "scripted",
};

export const drift = definePolicy({
  id: "drift",
  description: "steps to the goal at 1.0 when told to move right, drifting 0.002 per step",
  capabilities,
  suites: ["line"],
  concurrent: true,
  options: [],
  load: async () => ({
    capabilities,
    reset() {},
    act(obs) {
      // It knows the word "right" only in lower case; anything else it does not understand,
      // and it keeps moving at full speed: a brittle reader, which is what the example attack
      // (shout-attack.mjs) exposes.
      const x = obs.state[0] ?? 0;
      if (!/\bright\b/.test(obs.instruction)) return new Float32Array([0.2]);
      return new Float32Array([Math.max(-0.1, Math.min(0.1, 1 - x)) + 0.002]);
    },
    close() {},
  }),
});
