/**
 * What a report says of each arm and defense, read from the registries (built-ins and the
 * `--plugin`s a run loaded) at the moment a run is finalised, so that `buildReport` reads no
 * registry and builds the same report from the same inputs in any process.
 */
import { attacks } from "../attacks/index.js";
import type { PlanSpec } from "../core/plan.js";
import type { Attack } from "../core/types.js";
import { resolveDefenseParams } from "../defenses/index.js";
import type { ReportFile } from "../rundir/schema/index.js";

/** What the report says of one arm, from its attack; `params` as played, defaults included. */
export type ReportArm = Pick<ReportFile["arms"][string], "family" | "role" | "eai" | "access"> & {
  matches?: string;
  /** The defense this arm attacks adaptively. */
  adaptiveTo?: string;
  params: Record<string, unknown>;
};

/**
 * Every arm of the plan as the report describes it, and every defense's params as played: read
 * from the registries by the caller (report/arms.ts), so that building a report reads none.
 */
export interface ReportArms {
  arms: Record<string, ReportArm>;
  defenses: Record<string, Record<string, unknown>>;
}

/** What the report says of an attack's arm, apart from its params. */
export function armFacts(a: Attack<unknown>): Omit<ReportArm, "params"> {
  return {
    family: a.family,
    role: a.role,
    eai: a.eai,
    access: a.access,
    ...(a.matches === undefined ? {} : { matches: a.matches }),
    ...(a.adaptiveTo === undefined ? {} : { adaptiveTo: a.adaptiveTo }),
  };
}

/** Every arm's attack metadata and params as played (defaults included), and every defense's. */
export function reportArms(plan: PlanSpec): ReportArms {
  return {
    arms: Object.fromEntries(
      plan.arms.map((id) => {
        const a = attacks.get(id);
        return [
          id,
          {
            ...armFacts(a),
            params: a.params.parse(plan.attack_params[id] ?? {}) as Record<string, unknown>,
          },
        ];
      }),
    ),
    defenses: Object.fromEntries(
      (plan.defenses?.ids ?? []).map((id) => [
        id,
        resolveDefenseParams(id, plan.defenses?.params ?? {}) as Record<string, unknown>,
      ]),
    ),
  };
}
