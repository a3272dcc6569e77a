/**
 * The browser twin of `index.ts` (same exports): a page plays the in-process policies only (the
 * ONNX runtime and the served policies' clients are Node's).
 */
import { IN_PROCESS_POLICIES, policyRegistry } from "./in-process.js";

export const policies = policyRegistry(IN_PROCESS_POLICIES);
