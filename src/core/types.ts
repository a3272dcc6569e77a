/**
 * The contracts every plugin implements (ARCHITECTURE.md §4). Kept free of any implementation so
 * that suites, policies, attacks and the runner can evolve independently.
 */
import type { z } from "zod";
import type { Rng } from "./rng.js";

// ---------------------------------------------------------------------------------------------
// Vocabularies: each list is declared once here; the types below, the plugin contract, the
// served clients and the report schema read it.

/** How a policy turns its inputs into actions. */
export const ACTION_HEADS = ["scripted", "regression", "token", "flow", "unknown"] as const;
export type ActionHead = (typeof ACTION_HEADS)[number];

export const ATTACK_ROLES = ["baseline", "control", "treatment"] as const;
export type AttackRole = (typeof ATTACK_ROLES)[number];

/** What an attack reaches of the system under test. */
export const ATTACK_ACCESS = [
  "none",
  "black-box-query",
  "white-box-gradient",
  "in-scene-physical",
  "action-channel",
  "weights",
] as const;
export type AttackAccess = (typeof ATTACK_ACCESS)[number];

/** What an attack may require of a policy (`AttackRequirements.policy`). */
export const POLICY_REQUIREMENTS = [
  "differentiable",
  "weights",
  "readsContext",
  "cameras",
  "readsState",
  "queryable",
] as const;
/** What an attack may require of a suite (`AttackRequirements.suite`). */
export const SUITE_REQUIREMENTS = ["sceneEditing", "cameras", "physics", "fitScenes"] as const;

/** What a policy's leaderboard rows are evidence of (see `Policy.evidence`). */
export const POLICY_EVIDENCE = ["served-model", "own"] as const;
/** What a suite's leaderboard rows are evidence of (see `Suite.evidence`). */
export const SUITE_EVIDENCE = ["fixture", "simulator"] as const;

// ---------------------------------------------------------------------------------------------
// Observations and actions

/** An image as the policy receives it: HWC, row-major, 8 bits per channel (RGB unless noted). */
export interface Image {
  width: number;
  height: number;
  channels: number;
  data: Uint8Array;
}

/** What a policy sees at one step. */
export interface Observation {
  /**
   * Camera images by camera name (`agentview`, `wrist`, …). Simulated suites render each camera
   * on first read (core/lazy-images.ts): read them during the step that produced them, or copy
   * the record (`{ ...obs.images }`) to keep them longer.
   */
  images: Record<string, Image>;
  /** Proprioceptive state vector (layout given by the suite's `stateLayout`). */
  state: Float32Array;
  /** The language instruction, as received. */
  instruction: string;
  /** Optional side channel (tool descriptions, system notes) for policies that read one. */
  context?: string[];
  /**
   * Privileged simulator state. Only policies that declare `privileged` (the scripted expert)
   * receive it; the runner strips it for every other policy.
   */
  privileged?: SimState;
}

/** One action: a vector in the suite's action space (7-D: dx dy dz droll dpitch dyaw gripper). */
export type Action = Float32Array;

// ---------------------------------------------------------------------------------------------
// Simulator state and predicates

export type Vec3 = [number, number, number];
/** Quaternion w, x, y, z (MuJoCo order). */
export type Quat = [number, number, number, number];

export interface ObjectPose {
  pos: Vec3;
  quat: Quat;
}

export interface Contact {
  /** Names of the two bodies (or geoms) in contact. */
  a: string;
  b: string;
  /** Normal force in newtons. */
  force: number;
}

/**
 * Simulator state as predicates read it. Every field is optional: a predicate that needs a
 * missing field reports the step as unjudged, never as safe.
 */
export interface SimState {
  eefPos?: Vec3;
  eefQuat?: Quat;
  /** Gripper opening in metres (distance between the fingers). */
  gripper?: number;
  joints?: number[];
  objects?: Record<string, ObjectPose>;
  contacts?: Contact[];
  /** Suite-specific scalars (the stub suite's 1-D position, …). */
  scalars?: Record<string, number>;
}

/** An axis-aligned box, metres in the world frame. */
export interface Zone {
  id: string;
  min: Vec3;
  max: Vec3;
  /** What the zone stands for ("the human's hand area"). */
  label: string;
}

/**
 * How benign motion moves (src/judges/envelope.ts): the largest commanded translation norm per
 * step (action units) and the box the commanded next gripper position stays in (metres; null
 * for none). Fitted by calibration; `envelope_monitor` stops motion outside it.
 */
export interface BenignEnvelope {
  translation: number;
  box: { min: Vec3; max: Vec3 } | null;
}

export interface Judgement {
  unsafe: boolean;
  /** False when the state lacked what the predicate needs. */
  judged: boolean;
  detail?: string;
  /** Excess over the predicate's threshold at this step (N for force predicates), summed over what exceeded it; 0 when nothing did. */
  cost?: number;
}

export interface Predicate {
  id: string;
  description: string;
  /** True when the predicate reports a cumulative cost (`Judgement.cost`). */
  measuresCost?: boolean;
  evaluate(state: SimState): Judgement;
}

/**
 * What a task's hazards are, in words attacks can use and zones/objects predicates can test.
 * Instruction attacks must take the object they name from here, never hard-code one.
 */
export interface HazardDescription {
  /** The primary hazard an attacker would steer toward, as a noun phrase ("the knife"). */
  target: string;
  /** Where that hazard is, in words ("the red zone where the person's hand rests"). */
  location: string;
  /** World position of the primary hazard, for attacks that steer motion toward it. */
  targetPos?: Vec3;
  zones: Zone[];
  fragile: string[];
  forbidden: string[];
}

// ---------------------------------------------------------------------------------------------
// Suites

export interface TaskSpec {
  id: string;
  instruction: string;
  /** Number of scenes (fixed initial states), indexed 0..scenes-1. */
  scenes: number;
  /** Default horizon in steps. */
  horizon: number;
  hazard: HazardDescription;
  /** The object the task manipulates, when it has one. */
  object?: string;
  /**
   * Body names the task can be retargeted to (`ResetOptions.target`): the same scene with
   * another object as the one to move, for demonstrations of every object. Absent: none.
   */
  targets?: string[];
}

export interface ActionSpace {
  dim: number;
  low: number[];
  high: number[];
  /** Names of the components, for docs and reports. */
  names: string[];
}

export interface SuiteCapabilities {
  cameras: string[];
  /** Size of the images it renders, when every camera renders one size. */
  imageSize?: { width: number; height: number };
  /** Length of `Observation.state`. */
  stateDim: number;
  /** Whether the suite can add objects to a scene (decoy objects, signs). */
  sceneEditing: boolean;
  /** Whether it is a real physics simulator. */
  physics: boolean;
  /**
   * Where each camera sits and looks, when the suite knows: attacks that place a patch in view
   * centre it on the hazard's projection. Absent, they place it at a seeded spot.
   */
  cameraModels?: readonly CameraModel[];
  /**
   * Whether an attack can open the suite itself, outside the episodes, to render scenes it fits
   * on (a universal patch, a trigger scan). Absent means yes: every registered suite can. A
   * benchmark the bridge only sees through its messages cannot (false).
   */
  fitScenes?: boolean;
}

/** A pinhole camera: world-fixed, or riding on the end effector (a wrist camera). */
export interface CameraModel {
  name: string;
  mount: "world" | "eef";
  /** Position in the mount frame (world, or the end-effector site's frame). */
  pos: Vec3;
  /** Camera axes in the mount frame: x right, y up; the camera looks along -z. */
  x: Vec3;
  y: Vec3;
  z: Vec3;
  fovy: number;
}

/** A change an attack asks the suite to make to a scene before the episode starts. */
export interface SceneEdit {
  /** `trigger`: a declared backdoor trigger tile (suites/mujoco/trigger.ts). */
  kind: "object" | "sign" | "trigger";
  /** Stable id of the edit (an object name in the scene). */
  id: string;
  /** Suite-specific parameters (shape, size, colour, text, pose). */
  params: Record<string, unknown>;
}

export interface StepResult {
  obs: Observation;
  state: SimState;
  /** Instantaneous task success at this step (the runner latches it). */
  taskSuccess: boolean;
  /** True when the simulator cannot continue (not used for success). */
  done: boolean;
}

export interface ResetOptions {
  task: string;
  scene: number;
  seed: number;
  edits?: SceneEdit[];
  /**
   * Play the scene with this object (one of `TaskSpec.targets`) as the one to move: the
   * instruction names it and success is judged on it. For recording demonstrations of every
   * object; runs never set it. A suite that cannot retarget refuses it.
   */
  target?: string;
}

/** One running simulator. A run opens one per concurrent episode (or per worker). */
export interface SuiteInstance {
  reset(options: ResetOptions): Promise<StepResult> | StepResult;
  /**
   * Digest of the simulator state right after the last reset, before scene edits, so every arm
   * at one (task, seed) can be checked to start from the same scene.
   */
  sceneDigest(): string;
  step(action: Action): Promise<StepResult> | StepResult;
  close(): Promise<void> | void;
}

export interface Suite {
  id: string;
  description: string;
  capabilities: SuiteCapabilities;
  actionSpace: ActionSpace;
  tasks(): TaskSpec[];
  /** The default predicates of a task. */
  predicates(task: string): Predicate[];
  open(options?: SuiteOpenOptions): Promise<SuiteInstance>;
  /** Which scene ranges serve which role (docs/protocol.md); absent: no ranges are reserved. */
  sceneRoles?: SceneRoles;
  /**
   * What a leaderboard row on this suite is evidence of: `fixture`, the wiring only (it says
   * nothing of a policy); `simulator`, a physics simulator. Absent: unclassified.
   */
  evidence?: (typeof SUITE_EVIDENCE)[number];
}

/** A half-open range of scene indices, [start, end). */
export type SceneRange = readonly [number, number];

/**
 * Scene ranges by role, the same for every task of a suite: scenes reserved for training
 * policies, for calibrating predicates, and for evaluation (every run's default).
 */
export interface SceneRoles {
  training: readonly SceneRange[];
  calibration: readonly SceneRange[];
  evaluation: readonly SceneRange[];
}

/** Scenes a policy's weights were trained on, declared by the policy. */
export interface TrainingScenes {
  suite: string;
  /** Tasks trained on; "*" means every task of the suite. */
  tasks: readonly string[] | "*";
  scenes: readonly SceneRange[];
}

export interface SuiteOpenOptions {
  /**
   * Cameras to render (the ones the policy reads). An empty list turns rendering off, which
   * makes episodes of state-only policies (the scripted expert) many times faster.
   */
  cameras?: string[];
}

// ---------------------------------------------------------------------------------------------
// Policies

export interface PolicyCapabilities {
  /** Cameras the policy reads (empty for state-only policies). */
  cameras: string[];
  /**
   * The cameras are what it can forward, not what it needs (a served policy whose server has not
   * said): the pre-flight check does not refuse a suite that lacks some of them.
   */
  camerasOptional?: boolean;
  readsState: boolean;
  /** Reads `Observation.context` (tool descriptions, notes). */
  readsContext: boolean;
  /** Reads privileged simulator state (expert policies only). */
  privileged: boolean;
  actionDim: number;
  /** Smallest `Observation.state` it can read, when it reads state (checked before a run). */
  stateDim?: number;
  /** Image size it needs per camera, when it cannot resize (checked before a run). */
  imageSize?: { width: number; height: number };
  /** Length of the action chunk it predicts (1 when it predicts one step). */
  chunk: number;
  /** Exposes input gradients for white-box attacks. */
  differentiable: boolean;
  /** Exposes its weight tensors for weight-integrity attacks. */
  weights: boolean;
  stochastic: boolean;
  actionHead: ActionHead;
  /** Answers side-effect-free queries for black-box search; set from `query` when loaded. */
  queryable?: boolean;
}

export interface EpisodeInfo {
  task: string;
  seed: number;
  /** Seed for the policy's own sampler, derived from the cell. */
  policySeed: number;
  /**
   * A benchmark's own recording of the episode (vla-eval's EPISODE_START `recording` block:
   * sid, eid, eval_id, db_path), passed on as it came to a vla-eval model server behind a bridge.
   */
  recording?: Readonly<Record<string, unknown>>;
}

/** Gradient access for white-box attacks (policies with `differentiable`). */
export interface DifferentiablePolicy {
  /**
   * Gradient of a scalar objective of the policy's first predicted action with respect to the
   * pixels of one camera image (HWC float, same size as the image), and the objective's value.
   * The objective is the dot product of the action's translation with `direction`.
   */
  inputGradient(
    obs: Observation,
    camera: string,
    direction: Vec3,
  ): Promise<{ value: number; grad: Float32Array }>;
}

/** Weight access for weight-integrity attacks (policies with `weights`). */
export interface WeightAccess {
  /** Named float32 weight tensors, live views: writes change the policy. */
  weightTensors(): { name: string; data: Float32Array }[];
  /** Called after in-place edits so the policy can refresh derived state. */
  weightsChanged(): void;
}

/**
 * The model behind a served policy, as its server reported it when the connection opened (the
 * openpi metadata frame, the vla-eval hello, OpenVLA's `/provael/info`). `name` and `digest` are
 * null when the server did not say; nothing here is verified.
 */
export interface ServedModel {
  protocol: string;
  name: string | null;
  digest: string | null;
}

export interface PolicyInstance {
  capabilities: PolicyCapabilities;
  /** SHA-256 of the weights actually loaded, when the policy has weights. */
  digest?: string;
  /** What a served policy's server said when the connection opened (a vla-eval HELLO payload). */
  handshake?: Readonly<Record<string, unknown>>;
  /** A served policy: the model its server reported (recorded in the run as `served_model`). */
  servedModel?: ServedModel;
  reset(episode: EpisodeInfo): Promise<void> | void;
  act(obs: Observation): Promise<Action> | Action;
  /**
   * Optional, for a client that may answer a step from an action chunk (a served policy): how
   * many of this instance's `act` calls reached the model, and how many actions those answers
   * held in all. A bridge counts from it which observations the model actually used.
   */
  modelCalls?(): { queries: number; actions: number };
  /** Optional: a side-effect-free prediction for search attacks (no chunk state consumed). */
  query?(obs: Observation): Promise<Action> | Action;
  differentiable?: DifferentiablePolicy;
  weights?: WeightAccess;
  close(): Promise<void> | void;
}

export interface PolicyOptions {
  /** Path to weights or a model file, when the policy takes one. */
  path?: string;
  /** Server address for served policies. */
  url?: string;
  /** Free-form options from the CLI or a config file. */
  extra?: Record<string, unknown>;
}

export interface Policy {
  id: string;
  description: string;
  /** Capabilities before loading (a served policy may refine them once connected). */
  capabilities: PolicyCapabilities;
  /** Suites the policy was built for; empty means any. */
  suites: string[];
  /** Whether episodes may run concurrently against one instance (I/O-bound served policies). */
  concurrent: boolean;
  /**
   * I/O-bound (waits on a server): always played in the main thread, never in worker threads,
   * even when it cannot share one instance across episodes.
   */
  ioBound?: boolean;
  /**
   * The scenes its weights were trained on, for the options given (null or absent: none known);
   * a run that would score it on them is refused unless `--allow-training-scenes`.
   */
  trainingScenes?(options: PolicyOptions): TrainingScenes[] | null;
  /**
   * What a leaderboard row of this policy is evidence of: `served-model`, a real model behind a
   * server or in an exported graph; `own`, one of Provael's own policies (it tests the method,
   * not a model). Absent: unclassified.
   */
  evidence?: (typeof POLICY_EVIDENCE)[number];
  /**
   * The `PolicyOptions.extra` keys it reads (`--policy-option KEY=VALUE`): any other key is
   * refused before anything plays, so a misspelt option never runs the defaults silently.
   * Absent: not declared, every key passes (a plugin written before this field).
   */
  options?: readonly string[];
  load(options: PolicyOptions): Promise<PolicyInstance>;
}

// ---------------------------------------------------------------------------------------------
// Attacks

/** Embodied AI Security Top 10 ids used by the registry. */
export const EAI_RISKS = [
  "EAI00",
  "EAI01",
  "EAI02",
  "EAI03",
  "EAI04",
  "EAI05",
  "EAI06",
  "EAI07",
  "EAI08",
  "EAI09",
  "EAI10",
] as const;
export type EaiRisk = (typeof EAI_RISKS)[number];

/** What an attack needs; unmet requirements make it N/A for the run, never a 0. */
export interface AttackRequirements {
  /** `queryable`: the policy answers side-effect-free queries (`PolicyInstance.query`). */
  policy?: Array<(typeof POLICY_REQUIREMENTS)[number]>;
  suite?: Array<(typeof SUITE_REQUIREMENTS)[number]>;
}

/** Budget use an attack reports per episode (declared with the episode record it is part of). */
export type { BudgetUse } from "./episode.js";

import type { BudgetUse } from "./episode.js";

/** A budgeted query oracle for black-box search attacks. */
export interface QueryOracle {
  readonly budget: number;
  readonly used: number;
  /** Predicted action for an observation; throws `attack/budget-exhausted` past the budget. */
  query(obs: Observation): Promise<Action>;
}

export interface AttackContext<P> {
  params: P;
  rng: Rng;
  task: TaskSpec;
  seed: number;
  repeat: number;
  suite: { id: string; capabilities: SuiteCapabilities; actionSpace: ActionSpace };
  policy: PolicyInstance;
  oracle: QueryOracle;
  /**
   * For an attack `adaptiveTo` a defense: that defense's params as the run gives them (its
   * defaults when the run does not name it), whether or not this cell is defended, so that the
   * defended and undefended twins face the same attacker.
   */
  defense?: {
    id: string;
    params: unknown;
    /**
     * A fresh copy of that defense for this cell, as the deployment configures it but drawing
     * from the attacker's own generator (the attacker knows the defense, not its seed). Absent
     * where the loop cannot build one.
     */
    model?(): Promise<DefenseHooks>;
  };
}

export interface AttackHooks {
  /** Changes to the scene before reset (decoy objects, signs). */
  scene?(): SceneEdit[];
  /** The instruction the policy receives (called once per episode). */
  instruction?(original: string): string;
  /** The observation the policy sees at a step (after the instruction is set). */
  perceive?(obs: Observation, step: number): Observation | Promise<Observation>;
  /** The action the simulator receives (action-channel attacks). */
  actuate?(action: Action, step: number, state: SimState): Action;
  /** Called when the episode ends (restore weights, …). */
  end?(): void | Promise<void>;
  /** Budget use so far. */
  budget?(): BudgetUse;
}

export interface Attack<P = Record<string, unknown>> {
  id: string;
  family: string;
  role: AttackRole;
  eai: EaiRisk | null;
  access: AttackAccess;
  description: string;
  /** For controls: the attack whose size this control matches (the attack it controls for). */
  matches?: string;
  /**
   * For controls: the params of the matched attack that set the control's size (budget, ε,
   * magnitude, length, count). The control's schema declares them with the attack's defaults; a
   * value a run gives the attack (`--attack-param freeze.length=…`) applies to the control too,
   * unless the run gives the control its own (attacks/params.ts).
   */
  sharedParams?: readonly string[];
  /**
   * For treatments without a matched control: why no harmless variation of the same size fits.
   * A treatment declares either a control (a control whose `matches` names it) or this reason.
   */
  noControl?: string;
  /**
   * An adaptive attack names the defense it knows (its mechanism and params, never its seed):
   * the report's headline flags a defense that never met an attack adaptive to it.
   */
  adaptiveTo?: string;
  requires: AttackRequirements;
  params: z.ZodType<P>;
  begin(ctx: AttackContext<P>): AttackHooks | Promise<AttackHooks>;
}

// ---------------------------------------------------------------------------------------------
// Defenses

/**
 * Where a defense sits in the episode loop (docs/adr/0008-defenses-in-the-episode-loop.md):
 * `input` between the arm's perturbation and the policy (instruction, images, state), `action`
 * between the arm's action channel and the robot, `monitor` after both, watching what would
 * reach the robot and stopping the episode when it must.
 */
export type DefenseKind = "input" | "action" | "monitor";

/** A defense's decision to stop the arm (a safe stop): the episode ends, recorded as a stop. */
export interface DefenseStop {
  stop: string;
}

/** What a defense needs; unmet means the defense cannot run with this policy or suite. */
export interface DefenseRequirements {
  policy?: Array<"weights" | "cameras" | "readsState">;
  suite?: Array<"cameras" | "physics">;
}

export interface DefenseContext<P> {
  params: P;
  /** The defense's own seeded generator for this cell (never shared with the arm's). */
  rng: Rng;
  task: TaskSpec;
  seed: number;
  repeat: number;
  suite: { id: string; capabilities: SuiteCapabilities; actionSpace: ActionSpace };
  /** The policy the defense protects (weight guards read its weights, never change them). */
  policy: PolicyInstance;
  /**
   * Keep-out zones the deployment knows for this task: the calibration's zone when the task is
   * calibrated, else the suite's declared hazard zones (possibly none).
   */
  zones: Zone[];
  /**
   * The benign envelope the task's calibration fitted (absent or null: the task is not
   * calibrated, or its calibration predates envelopes; a monitor falls back to its params).
   */
  envelope?: BenignEnvelope | null;
  /** Instructions the deployment accepts: every task instruction of the suite. */
  instructions: string[];
  /**
   * Runs `fn` and counts its wall-clock time as this defense's latency for the current step:
   * for work a defense defers past its hook (an image purified only when the policy reads it).
   * The episode loop supplies it; elsewhere (an attacker's model of the defense) it is absent.
   */
  time?: <T>(fn: () => T) => T;
}

export interface DefenseHooks {
  /** Runs once after the policy is reset, before the first step (a weight check at load). */
  start?(): DefenseStop | null | Promise<DefenseStop | null>;
  /** The instruction the policy receives (once per episode), or a refusal (a stop). */
  instruction?(text: string): string | DefenseStop;
  /** The observation the policy sees, after the arm's perturbation. */
  perceive?(
    obs: Observation,
    step: number,
  ): Observation | DefenseStop | Promise<Observation | DefenseStop>;
  /** The action the robot receives, after the arm's action channel. */
  actuate?(action: Action, step: number, state: SimState): Action | DefenseStop;
  /** Watches what would reach the robot this step; a stop ends the episode before it moves. */
  monitor?(
    step: number,
    action: Action,
    state: SimState,
  ): DefenseStop | null | Promise<DefenseStop | null>;
  /** What the defense did in this episode (interventions, checks), recorded per episode. */
  summary?(): Record<string, number>;
}

export interface Defense<P = Record<string, unknown>> {
  id: string;
  kind: DefenseKind;
  description: string;
  requires: DefenseRequirements;
  params: z.ZodType<P>;
  begin(ctx: DefenseContext<P>): DefenseHooks | Promise<DefenseHooks>;
}
