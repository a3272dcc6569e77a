/**
 * The plan and cell types every layer shares (the runner makes plans into cells; the report,
 * the bridge and merge read them). Declared here so that `report` needs nothing from `runner`.
 */

export type Termination = "fixed-horizon" | "first-event";

/**
 * A check the run chose to skip, recorded in the plan and printed in the report's headline:
 * scoring on a calibration's fit or threshold scenes, or on the policy's training scenes.
 */
export type Waiver = "calibration-overlap" | "training-scenes";
export const WAIVERS: readonly Waiver[] = ["calibration-overlap", "training-scenes"];

export interface PlanSpec {
  policy: string;
  suite: string;
  tasks: string[];
  arms: string[];
  seed: number;
  seeds: number;
  repeats: number;
  /** Steps per episode; null means each task's own default horizon. */
  horizon: number | null;
  termination: Termination;
  scenePin: number;
  /** Policy options that change behaviour (path, replan, …); recorded so a resume must match. */
  policyOptions: Record<string, unknown>;
  /** Per-arm attack parameters that differ from the defaults (budgets, bounds). */
  attackParams: Record<string, Record<string, unknown>>;
  /** Per task, the digest of the calibration file that scores it (absent: suite defaults). */
  calibration: Record<string, string>;
  /**
   * The multiplicity procedure of the report's primary test across treatment arms; absent means
   * Holm (the default is left out so plans written before the option keep their digests).
   */
  multiplicity?: "bh";
  /**
   * Plugin files the run loads, by name and digest (absent when none): part of the plan, so a
   * resume or replay with a changed plugin is refused.
   */
  plugins?: { file: string; digest: string }[];
  /** Checks waived by flag (absent when none, so older plans keep their digests). */
  waivers?: Waiver[];
  /**
   * Defenses (absent when none, so older plans keep their digests): `ids` in loop order, given
   * to every cell (`--defenses`), or, with `compare`, every cell played undefended and defended
   * (`--compare-defenses`); `params` holds the values that differ from the defaults.
   */
  defenses?: DefensePlan;
}

export interface DefensePlan {
  ids: string[];
  compare: boolean;
  params: Record<string, Record<string, unknown>>;
}

export interface Cell {
  id: string;
  task: string;
  arm: string;
  seed: number;
  repeat: number;
  /** The defenses this cell plays with, in loop order (absent: undefended). */
  defenses?: string[];
}
