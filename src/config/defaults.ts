/**
 * What `npx provael attack` runs with no flags. The stub pair until the learned policy ships;
 * then `tiny-vla` on `tabletop` (issue: the embedded default).
 */
export const DEFAULTS = {
  policy: "stub",
  suite: "stub",
  attacks: ["none", "control", "instruction"],
  seeds: 10,
  seed: 0,
  repeats: 1,
  termination: "fixed-horizon",
  concurrency: 1,
  scenePin: 0,
} as const;
