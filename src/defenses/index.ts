/** The defense registry: one import and one entry per defense. Everything else derives from it. */
import { ProvaelError } from "../core/errors.js";
import { Registry, unknownName } from "../core/registry.js";
import type { Defense, DefenseKind } from "../core/types.js";
import { actionShield } from "./action.js";
import { imagePurifier, instructionFilter, stateCheck } from "./input.js";
import { envelopeMonitor, weightGuard } from "./monitor.js";

// biome-ignore lint/suspicious/noExplicitAny: the registry holds defenses of every params type.
export type AnyDefense = Defense<any>;

export const defenses = new Registry<AnyDefense>(
  "defense",
  [instructionFilter, imagePurifier, stateCheck, actionShield, weightGuard, envelopeMonitor],
  "provael list-defenses",
  "config/unknown-defense",
);

/** Where each kind sits in the loop, in the order a step meets them. */
export const KIND_ORDER: readonly DefenseKind[] = ["input", "action", "monitor"];

/**
 * A comma-separated list of defense ids, checked, without duplicates, in the order a step meets
 * them (inputs, then actions, then monitors; the given order within a kind).
 */
export function resolveDefenses(spec: readonly string[]): string[] {
  const ids: string[] = [];
  for (const raw of spec) {
    const name = raw.trim();
    if (name === "") continue;
    if (!defenses.has(name))
      throw unknownName(
        "defense",
        name,
        defenses.ids(),
        "provael list-defenses",
        "config/unknown-defense",
      );
    if (!ids.includes(name)) ids.push(name);
  }
  if (ids.length === 0) {
    throw new ProvaelError("config/invalid", "the defense list is empty", {
      hint: "pass at least one defense, e.g. --defenses action_shield (see `provael list-defenses`)",
    });
  }
  const rank = (id: string) => KIND_ORDER.indexOf(defenses.get(id).kind);
  return ids
    .map((id, i) => ({ id, i }))
    .sort((a, b) => rank(a.id) - rank(b.id) || a.i - b.i)
    .map(({ id }) => id);
}

/** A defense's params as a run gives them, defaults filled, checked against its schema. */
export function resolveDefenseParams(
  id: string,
  given: Record<string, Record<string, unknown>> | undefined,
): unknown {
  const d = defenses.get(id);
  const parsed = d.params.safeParse(given?.[id] ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ProvaelError(
      "config/invalid",
      `--defense-param ${id}: ${issue?.path.join(".") || "(params)"}: ${issue?.message}`,
      {
        details: { defense: id, issues: parsed.error.issues.map((i) => i.message) },
        hint: `see \`provael list-defenses\` for ${id}'s params and their defaults`,
      },
    );
  }
  return parsed.data;
}
