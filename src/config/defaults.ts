/**
 * What `npx provael attack` runs with no flags: our learned policy `tiny-vla` on the MuJoCo
 * `tabletop` suite, with the `quick` recipe's arms (its per-suite override keeps it short).
 */
export const DEFAULTS = {
  policy: "tiny-vla",
  suite: "tabletop",
  attacks: ["none", "control", "instruction"],
  seeds: 10,
  seed: 0,
  repeats: 1,
  termination: "fixed-horizon",
  concurrency: 1,
  scenePin: 0,
} as const;
