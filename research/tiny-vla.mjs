// The probes that look inside tiny-vla (its locator, its anchor) need the loaded instance itself,
// not the generic PolicyInstance a registry's `load` promises: checked here once, by class.
import { TinyVlaInstance } from "../dist/policies/tiny-vla/policy.js";

/**
 * Whether the loaded policy is a tiny-vla (the shipped one, its backdoored twin or other weights).
 * @param {import("../dist/core/types.js").PolicyInstance} policy
 * @returns {policy is TinyVlaInstance}
 */
export function isTinyVla(policy) {
  return policy instanceof TinyVlaInstance;
}

/**
 * The loaded policy as a tiny-vla instance, or an error naming what was loaded instead.
 * @param {import("../dist/core/types.js").PolicyInstance} policy
 * @param {string} id the policy's id, for the error
 * @returns {TinyVlaInstance}
 */
export function asTinyVla(policy, id) {
  if (!isTinyVla(policy))
    throw new Error(`${id} is not a tiny-vla policy: this probe reads tiny-vla's locator`);
  return policy;
}
