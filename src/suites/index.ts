/** The suite registry: one import and one entry per suite. */
import { Registry } from "../core/registry.js";
import type { Suite } from "../core/types.js";
import { reachSuite } from "./mujoco/reach.js";
import { tabletopSuite } from "./mujoco/tabletop.js";
import { stubSuite } from "./stub.js";

export const suites = new Registry<Suite>(
  "suite",
  [stubSuite, reachSuite, tabletopSuite],
  "provael list-suites",
  "config/unknown-suite",
);
