/**
 * The policies that play inside this process with nothing but the package's own files (what a
 * page can play too), and the registry built from a policy list. `index.ts` adds the ONNX and
 * served policies for Node; its browser twin registers these alone.
 */
import { Registry } from "../core/registry.js";
import type { Policy } from "../core/types.js";
import { scriptedPolicy } from "./scripted.js";
import { stubPolicy } from "./stub.js";
import { tinyVlaBackdooredPolicy, tinyVlaPolicy } from "./tiny-vla/policy.js";

export const IN_PROCESS_POLICIES: readonly Policy[] = [
  tinyVlaPolicy,
  tinyVlaBackdooredPolicy,
  scriptedPolicy,
  stubPolicy,
];

export const policyRegistry = (list: readonly Policy[]): Registry<Policy> =>
  new Registry<Policy>("policy", [...list], "provael list-policies", "config/unknown-policy");
