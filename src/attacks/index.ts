/** The attack registry: one import and one entry per attack. Everything else derives from it. */
import { ProvaelError } from "../core/errors.js";
import { Registry, unknownName } from "../core/registry.js";
import type { Attack } from "../core/types.js";
import { freeze, randomFreeze, randomOffset, trajectoryHijack } from "./action.js";
import {
  gradientPatchBpda,
  optimizedInstructionAdaptive,
  optimizedPatchAdaptive,
  shieldMarginHijack,
} from "./adaptive.js";
import {
  benignReword,
  declarativeText,
  nonsenseText,
  roleplayNoTarget,
  scrambledText,
} from "./control.js";
import { gradientPatch, randomSignNoise } from "./gradient.js";
import { benignToolDesc, mcpToolDesc, neutralSign, sceneText } from "./injection.js";
import { goalSubstitution, paraphrase, roleplay } from "./instruction.js";
import { none } from "./none.js";
import { randomHijackSearch, targetedHijack } from "./search/hijack.js";
import { optimizedInstruction, randomInstructionSearch } from "./search/instruction.js";
import { optimizedPatch, randomPatchSearch } from "./search/patch.js";
import { randomScanSearch, triggerScan } from "./search/scan.js";
import { unfittedPatch, universalPatch } from "./search/universal.js";
import { sensorNoise, stateSpoof } from "./sensor.js";
import { decoyObject, neutralDecoy, patch, placeboPatch } from "./visual.js";
import {
  lowbitFlips1,
  lowbitFlips8,
  lowbitFlips64,
  weightBitflip1,
  weightBitflip8,
  weightBitflip64,
} from "./weights.js";

// biome-ignore lint/suspicious/noExplicitAny: the registry holds attacks of every params type.
type AnyAttack = Attack<any>;

export const attacks = new Registry<AnyAttack>(
  "attack",
  [
    none,
    benignReword,
    nonsenseText,
    scrambledText,
    roleplayNoTarget,
    declarativeText,
    placeboPatch,
    neutralDecoy,
    neutralSign,
    benignToolDesc,
    randomFreeze,
    randomOffset,
    sensorNoise,
    randomInstructionSearch,
    randomPatchSearch,
    unfittedPatch,
    randomScanSearch,
    randomHijackSearch,
    randomSignNoise,
    lowbitFlips1,
    lowbitFlips8,
    lowbitFlips64,
    roleplay,
    goalSubstitution,
    paraphrase,
    patch,
    decoyObject,
    sceneText,
    mcpToolDesc,
    freeze,
    trajectoryHijack,
    stateSpoof,
    optimizedInstruction,
    optimizedPatch,
    universalPatch,
    triggerScan,
    targetedHijack,
    gradientPatch,
    weightBitflip1,
    weightBitflip8,
    weightBitflip64,
    gradientPatchBpda,
    optimizedInstructionAdaptive,
    optimizedPatchAdaptive,
    shieldMarginHijack,
  ],
  "provael list-attacks",
  "config/unknown-attack",
);

/** Families in registry order. */
export function families(): string[] {
  return [...new Set(attacks.items.map((a) => a.family))];
}

/** The controls matching an attack (those whose `matches` names it), in registry order. */
export function controlsFor(
  attackId: string,
  items: readonly AnyAttack[] = attacks.items,
): string[] {
  return items.filter((c) => c.role === "control" && c.matches === attackId).map((c) => c.id);
}

/**
 * Treatments that neither have a matched control nor say why none fits (`noControl`): each is a
 * defect of the registry, since a reader cannot tell the attack from any change of its size.
 */
export function uncontrolledTreatments(items: readonly AnyAttack[] = attacks.items): string[] {
  return items
    .filter((a) => a.role === "treatment")
    .filter((a) => controlsFor(a.id, items).length === 0 && !(a.noControl ?? "").trim())
    .map((a) => a.id);
}

/**
 * Expands a comma-separated list of attack ids and family names into attack ids, in registry
 * order, without duplicates.
 */
export function resolveAttacks(spec: string[]): string[] {
  const wanted = new Set<string>();
  // Controls named by family are the ones matching the run's attacks: a control whose attack is
  // not in the run has nothing to stand beside.
  let controlFamily = false;
  for (const raw of spec) {
    const name = raw.trim();
    if (name === "") continue;
    if (name === "all") {
      for (const a of attacks.items) wanted.add(a.id);
    } else if (name === "templated") {
      // Fixed transforms without an attacker budget: no query search, no gradients. A control
      // follows its attack (random-sign noise needs no gradient, but stands only beside PGD).
      const templated = (a: AnyAttack) =>
        a.access !== "black-box-query" && a.access !== "white-box-gradient";
      for (const a of attacks.items) {
        const matched = a.role === "control" && a.matches ? attacks.get(a.matches) : a;
        if (templated(a) && templated(matched)) wanted.add(a.id);
      }
    } else if (attacks.has(name)) {
      wanted.add(name);
    } else if (name === "control") {
      controlFamily = true;
    } else if (families().includes(name)) {
      for (const a of attacks.items) if (a.family === name) wanted.add(a.id);
    } else {
      throw unknownName(
        "attack or family",
        name,
        [...attacks.ids(), ...families(), "all", "templated"],
        "provael list-attacks",
        "config/unknown-attack",
      );
    }
  }
  if (controlFamily) {
    const treated = attacks.items.filter((a) => a.role === "treatment" && wanted.has(a.id));
    for (const c of attacks.items) {
      if (c.role !== "control") continue;
      if (treated.length === 0 || treated.some((t) => t.id === c.matches)) wanted.add(c.id);
    }
  }
  if (wanted.size === 0) {
    throw new ProvaelError("config/invalid", "the attack list is empty", {
      hint: "pass --attacks with at least one attack or family, e.g. --attacks none,instruction",
    });
  }
  return attacks.ids().filter((id) => wanted.has(id));
}

/**
 * The arms plus every registered control matching one of their treatments, in registry order:
 * an attack is measured beside the harmless change of its size unless the user opts out.
 *
 * @example withMatchedControls(["none", "patch"]) // ["none", "placebo_patch", "patch"]
 */
export function withMatchedControls(arms: string[]): string[] {
  const wanted = new Set(arms);
  for (const c of attacks.items) {
    if (c.role === "control" && c.matches !== undefined && wanted.has(c.matches)) wanted.add(c.id);
  }
  return attacks.ids().filter((id) => wanted.has(id));
}

/** The attacks declared adaptive to each defense (`adaptiveTo`), in registry order. */
export function adaptiveAttacks(
  items: readonly AnyAttack[] = attacks.items,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const a of items) {
    if (!a.adaptiveTo) continue;
    out[a.adaptiveTo] = [...(out[a.adaptiveTo] ?? []), a.id];
  }
  return out;
}
