/**
 * Turning command-line choices into a registered plan: the dataset checked against the policy,
 * the frames selected, the instructions of every arm written out, the scale measured.
 */
import { attacks, controlsFor } from "../../attacks/index.js";
import { ProvaelError } from "../../core/errors.js";
import { TOOL_VERSION } from "../../core/package-root.js";
import type { Policy, PolicyInstance, PolicyOptions } from "../../core/types.js";
import { conformalRank, minConformalN } from "../../stats/conformal.js";
import { wilsonInterval } from "../../stats/wilson.js";
import type { Dataset } from "../lerobot/reader.js";
import { type DatasetExpectations, requireDataset } from "../lerobot/validator.js";
import {
  armTexts,
  COMPETENCE_RULE,
  datasetDigest,
  EXCLUSION_RULE,
  framesOf,
  PLAN_SCHEMA,
  recordedSuite,
  SPLIT_RULE,
  STOPPING_RULE,
  type StudyPlan,
  taskFor,
} from "./plan.js";

/** How per-frame actions are asked for: the same for every arm. */
export const QUERY_RULE =
  "per frame: policy reset for the episode, primed with the episode's first recorded frame under the arm's instruction, then asked once (query) for the frame's action; a policy without query() is reset and asked with act() on the frame alone";

export interface PlanChoices {
  dataset: string;
  policy: Policy;
  policyOptions: PolicyOptions;
  /** Policy options as the plan records them (no server address or secrets). */
  recordedOptions: Record<string, unknown>;
  attack: string;
  attackParams?: Record<string, Record<string, unknown>>;
  controls?: boolean;
  robotTypes?: string[] | null;
  cameraMap?: Record<string, string>;
  episodes?: number[] | null;
  stride?: number;
  offset?: number;
  maxFramesPerEpisode?: number | null;
  dims?: number[] | null;
  targetFpr?: number;
  tolerance?: number;
  minAgreement?: number;
  minSuccess?: number;
  closedLoop?: boolean;
  /** Served policies: the action size the server returns. */
  actionDim?: number | null;
  hazard?: { target: string; location: string } | null;
  confidence?: number;
}

function names(v: unknown, n: number, prefix: string): string[] {
  if (Array.isArray(v) && v.length === n) return v.map(String);
  return Array.from({ length: n }, (_, i) => `${prefix}_${i}`);
}

/** What the dataset must be for this policy: its dims and the dataset cameras it reads. */
export function expectationsFor(
  inst: PolicyInstance,
  cameraMap: Record<string, string>,
  robotTypes: string[] | null,
  actionDim: number | null = null,
): DatasetExpectations {
  const caps = inst.capabilities;
  // A served policy's client cannot know its action size before the server answers; the plan
  // states it (--action-dim) and every returned action is held to it.
  if (actionDim !== null && !caps.camerasOptional && caps.actionHead !== "unknown") {
    throw new ProvaelError(
      "config/invalid",
      "--action-dim is for served policies, whose clients do not know the action size; this policy declares its own",
      { details: { declared: caps.actionDim } },
    );
  }
  const cameras = caps.camerasOptional
    ? Object.values(cameraMap)
    : caps.cameras.map((c) => cameraMap[c] ?? c);
  return {
    ...(robotTypes ? { robotTypes } : {}),
    actionDim: actionDim ?? caps.actionDim,
    ...(caps.readsState && caps.stateDim !== undefined ? { stateDim: caps.stateDim } : {}),
    cameras,
  };
}

/** The one-step command of a frame: the action, or for absolute targets the step from the state. */
export function command(
  mode: StudyPlan["measurement"]["command"],
  action: Float32Array,
  state: Float32Array,
): Float64Array {
  const out = Float64Array.from(action);
  if (mode === "action-minus-state")
    for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) - ((state[i] as number) ?? 0);
  return out;
}

async function scaleOf(
  ds: Dataset,
  mode: StudyPlan["measurement"]["command"],
  dim: number,
): Promise<number[]> {
  const sum = new Array(dim).fill(0);
  const sq = new Array(dim).fill(0);
  let n = 0;
  for (let i = 0; i < ds.episodes.length; i++) {
    for (const f of (await ds.episode(i, { images: false })).frames) {
      const c = command(mode, f.action, f.state);
      for (let d = 0; d < dim; d++) {
        sum[d] += c[d] as number;
        sq[d] += (c[d] as number) ** 2;
      }
      n++;
    }
  }
  return sum.map((s, d) => Math.sqrt(Math.max(0, sq[d] / n - (s / n) ** 2)));
}

/** Builds the plan; loads the policy once (for its digest and to word the arms' texts). */
export async function buildPlan(c: PlanChoices): Promise<StudyPlan> {
  const attack = attacks.get(c.attack);
  if (attack.role !== "treatment") {
    throw new ProvaelError("config/invalid", `'${c.attack}' is a ${attack.role}, not an attack`, {
      hint: "name the attack; its matched controls run beside it",
    });
  }
  const controls = c.controls === false ? [] : controlsFor(attack.id);
  const cameraMap = c.cameraMap ?? {};
  const inst = await c.policy.load(c.policyOptions);
  try {
    const robotTypes = c.robotTypes ?? null;
    const ds = await requireDataset(
      c.dataset,
      expectationsFor(inst, cameraMap, robotTypes, c.actionDim ?? null),
    );
    const suite = recordedSuite(ds);
    const offset = c.offset ?? 0;
    const maxFrames = c.maxFramesPerEpisode ?? null;
    const all = ds.episodes.map((e) => e.episodeIndex);
    const episodes = [...new Set(c.episodes ?? all)].sort((a, b) => a - b);
    for (const e of episodes) {
      if (!all.includes(e))
        throw new ProvaelError(
          "config/invalid",
          `episode ${e} is not in the dataset (0..${all.length - 1})`,
        );
    }
    if (episodes.length < 2) {
      throw new ProvaelError(
        "config/invalid",
        "the study needs at least two episodes: one part calibrates, a disjoint part is scored",
      );
    }
    // Within each task, alternate: both parts then hold every task that has two episodes or more.
    const position = new Map<string, number>();
    const calibration: number[] = [];
    const scored: number[] = [];
    for (const e of episodes) {
      const task = ds.episodes[e]?.task ?? "";
      const i = position.get(task) ?? 0;
      position.set(task, i + 1);
      (i % 2 === 0 ? calibration : scored).push(e);
    }
    if (scored.length === 0) {
      throw new ProvaelError(
        "config/invalid",
        "no episode is left to score: every task has one selected episode",
        {
          hint: "select at least two episodes of one task",
        },
      );
    }
    const count = (eps: number[], stride: number) =>
      eps.reduce(
        (s, e) =>
          s +
          framesOf(ds.episodes[e]?.length ?? 0, { stride, offset, maxFramesPerEpisode: maxFrames })
            .length,
        0,
      );
    const actionDim = ds.info.features.action?.shape[0] as number;
    const actionNames = names(ds.info.features.action?.names, actionDim, "action");
    const stateNames = names(
      ds.info.features["observation.state"]?.names,
      ds.info.features["observation.state"]?.shape[0] as number,
      "state",
    );
    const mode: StudyPlan["measurement"]["command"] =
      actionNames.length === stateNames.length && actionNames.every((n, i) => n === stateNames[i])
        ? "action-minus-state"
        : "action";
    const dims = c.dims ?? actionNames.map((_, i) => i);
    for (const d of dims) {
      if (!(Number.isInteger(d) && d >= 0 && d < actionDim))
        throw new ProvaelError(
          "config/invalid",
          `--dims: ${d} is not an action dimension (0..${actionDim - 1})`,
        );
    }
    const targetFpr = c.targetFpr ?? 0.05;
    const stride =
      c.stride ?? defaultStride((st) => count(calibration, st), dims.length, targetFpr);
    const scale = await scaleOf(ds, mode, actionDim);
    const flat = dims.filter((d) => !((scale[d] as number) > 0));
    if (flat.length > 0) {
      throw new ProvaelError(
        "calibration/degenerate",
        `the recorded actions do not vary on dimension(s) ${flat.join(", ")}, so divergence there has no scale`,
        {
          hint: "leave those dimensions out with --dims",
        },
      );
    }
    const params = c.attackParams ?? {};
    const instructions = [];
    for (const e of episodes) {
      const meta = ds.episodes[e];
      const benign = meta?.task ?? "";
      const arms = scored.includes(e)
        ? await armTexts(
            [attack.id, ...controls],
            taskFor(ds, e, suite, c.hazard ?? null),
            benign,
            e,
            params,
            inst,
          )
        : {};
      instructions.push({ episode: e, benign, arms });
    }
    const plan: StudyPlan = {
      schema: PLAN_SCHEMA,
      tool_version: TOOL_VERSION,
      dataset: {
        path: c.dataset,
        digest: datasetDigest(c.dataset),
        codebase_version: ds.info.codebase_version,
        robot_type: ds.info.robot_type,
        robot_types: robotTypes,
        fps: ds.info.fps,
        source: suite ? `provael:${suite}` : "external",
      },
      policy: {
        id: c.policy.id,
        options: c.recordedOptions,
        digest: inst.digest ?? null,
        camera_map: cameraMap,
        action_dim: c.actionDim ?? null,
      },
      attack: {
        id: attack.id,
        family: attack.family,
        params,
        controls,
        hazard: suite ? null : (c.hazard ?? null),
      },
      selection: {
        rule: "frames offset, offset + stride, ... of each selected episode, at most max_frames_per_episode, in order; no randomness",
        episodes,
        stride,
        offset,
        max_frames_per_episode: maxFrames,
        split_rule: SPLIT_RULE,
        calibration_episodes: calibration,
        scored_episodes: scored,
        frames: { calibration: count(calibration, stride), scored: count(scored, stride) },
      },
      instructions,
      measurement: {
        dims,
        dim_names: dims.map((d) => actionNames[d] as string),
        command: mode,
        scale: {
          method: "standard deviation of the one-step command over every frame of the dataset",
          values: scale,
        },
        query: QUERY_RULE,
      },
      envelope: { method: "per-dimension-order-statistic", target_fpr: targetFpr },
      exclusion_rule: EXCLUSION_RULE,
      stopping_rule: STOPPING_RULE,
      competence: {
        rule: COMPETENCE_RULE,
        tolerance: c.tolerance ?? 0.5,
        min_agreement: c.minAgreement ?? 0.5,
        min_success: c.minSuccess ?? 0.5,
        closed_loop: suite && c.closedLoop !== false ? { suite, horizon: null } : null,
      },
      confidence: c.confidence ?? 0.95,
    };
    checkFeasible(plan);
    return plan;
  } finally {
    await inst.close();
  }
}

/** The stride a plan takes when none is named, unless the data is too short for it. */
export const DEFAULT_STRIDE = 5;

/**
 * The stride when none is named: DEFAULT_STRIDE, or the largest smaller one at which the
 * calibration part holds the frames the envelope needs over the measured dimensions (a short
 * recording, such as a few tabletop episodes, gives too few at every 5th frame). A function of
 * the data and the plan's other choices, written into the plan; a named --stride is kept as
 * named, and refused if too sparse.
 */
export function defaultStride(
  calibrationFrames: (stride: number) => number,
  dims: number,
  targetFpr: number,
): number {
  const beta = targetFpr / (2 * dims);
  for (let st = DEFAULT_STRIDE; st > 1; st--)
    if (conformalRank(calibrationFrames(st), beta) !== null) return st;
  return 1;
}

/**
 * Refuses a plan that cannot give a result, before it is registered (a registered plan is
 * immutable, so a refusal at run time would mean registering again): the calibration part must
 * hold the frames the envelope's conformal bound needs over the measured dimensions, and the
 * competence rule must be reachable, at 100% agreement or success, with the chosen episodes.
 */
export function checkFeasible(plan: StudyPlan): void {
  const D = plan.measurement.dims.length;
  const target = plan.envelope.target_fpr;
  const beta = target / (2 * D);
  const n = plan.selection.frames.calibration;
  if (conformalRank(n, beta) === null) {
    throw new ProvaelError(
      "calibration/too-few-scenes",
      `the envelope needs at least ${minConformalN(beta)} calibration frames for a ${target} false-positive target over ${D} dimension(s), the plan selects ${n}`,
      {
        details: { need: minConformalN(beta), have: n, dims: D },
        hint: "select more frames (a smaller --stride or more episodes), fewer --dims, or a larger --target-fpr",
      },
    );
  }
  const c = plan.competence;
  const conf = { confidence: plan.confidence };
  const [what, count, min, flag] = c.closed_loop
    ? ([
        "closed-loop clean success",
        plan.selection.scored_episodes.length,
        c.min_success,
        "--min-success",
      ] as const)
    : ([
        "agreement with the recorded action",
        plan.selection.frames.scored,
        c.min_agreement,
        "--min-agreement",
      ] as const);
  const best = count === 0 ? 0 : wilsonInterval(count, count, conf).low;
  if (best < min) {
    throw new ProvaelError(
      "config/invalid",
      `competence cannot be shown: even ${count}/${count} ${what} has a Wilson lower bound of ${best.toFixed(3)}, below ${flag} ${min}`,
      {
        details: { rule: c.closed_loop ? "closed-loop" : "agreement", count, min, best },
        hint: `select more ${c.closed_loop ? "episodes" : "frames"}, or lower ${flag}`,
      },
    );
  }
}
