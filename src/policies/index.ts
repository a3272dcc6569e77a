/** The policy registry: one import and one entry per policy. */
import { Registry } from "../core/registry.js";
import type { Policy } from "../core/types.js";
import { stubPolicy } from "./stub.js";

export const policies = new Registry<Policy>(
  "policy",
  [stubPolicy],
  "provael list-policies",
  "config/unknown-policy",
);
