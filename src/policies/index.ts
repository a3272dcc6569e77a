/** The policy registry: one import and one entry per policy. */
import { IN_PROCESS_POLICIES, policyRegistry } from "./in-process.js";
import { onnxPolicy } from "./onnx.js";
import { openpiPolicy } from "./served/openpi.js";
import { openvlaPolicy } from "./served/openvla.js";
import { vlaEvalPolicy } from "./served/vla-eval.js";

export const policies = policyRegistry([
  ...IN_PROCESS_POLICIES,
  onnxPolicy,
  openpiPolicy,
  openvlaPolicy,
  vlaEvalPolicy,
]);
