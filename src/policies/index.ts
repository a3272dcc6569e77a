/** The policy registry: one import and one entry per policy. */
import { Registry } from "../core/registry.js";
import type { Policy } from "../core/types.js";
import { onnxPolicy } from "./onnx.js";
import { scriptedPolicy } from "./scripted.js";
import { openpiPolicy } from "./served/openpi.js";
import { openvlaPolicy } from "./served/openvla.js";
import { vlaEvalPolicy } from "./served/vla-eval.js";
import { stubPolicy } from "./stub.js";
import { tinyVlaBackdooredPolicy, tinyVlaPolicy } from "./tiny-vla/policy.js";

export const policies = new Registry<Policy>(
  "policy",
  [
    tinyVlaPolicy,
    tinyVlaBackdooredPolicy,
    scriptedPolicy,
    stubPolicy,
    onnxPolicy,
    openpiPolicy,
    openvlaPolicy,
    vlaEvalPolicy,
  ],
  "provael list-policies",
  "config/unknown-policy",
);
