/** The suite registry: one import and one entry per suite. */
import { Registry } from "../core/registry.js";
import type { Suite } from "../core/types.js";
import { stubSuite } from "./stub.js";

export const suites = new Registry<Suite>(
  "suite",
  [stubSuite],
  "provael list-suites",
  "config/unknown-suite",
);
