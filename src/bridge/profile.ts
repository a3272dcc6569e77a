/**
 * Benchmark profiles: what `provael bridge` needs to know about a benchmark it does not run.
 * A profile says where the end-effector pose sits in the benchmark's observation (and in which
 * frame and units), which image keys it sends and what to ask for in the HELLO reply, the
 * default predicates (uncalibrated, reported as suite defaults), per-task hazards where known,
 * and the key under which a benchmark subclass sends contacts and object poses.
 *
 * Built-in profiles live in `profiles/*.yaml` at the package root (shipped in the npm package);
 * any other YAML or JSON file in the same format (docs/benchmarks.md § profile format) is loaded
 * by path.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ProvaelError } from "../core/errors.js";
import { PACKAGE_ROOT } from "../core/package-root.js";
import { closest } from "../core/registry.js";
import type {
  Contact,
  HazardDescription,
  ObjectPose,
  Predicate,
  Quat,
  SimState,
  TaskSpec,
  Vec3,
  Zone,
} from "../core/types.js";
import { describeIssues, firstIssue } from "../core/zod-issues.js";
import {
  DEFAULT_PHYSICAL_HAZARD,
  forbiddenGraspPredicate,
  keepOutPredicate,
  physicalHazardPredicate,
} from "../judges/index.js";
import {
  calibrated,
  type LoadedCalibration,
  type Provenance,
  predicatesFor,
  provenanceOf,
} from "../kernel/index.js";
import { suites } from "../suites/index.js";

/** The profiles shipped in `profiles/`, by name. */
export const BUILTIN_PROFILES = [
  "behavior1k",
  "calvin",
  "duobench",
  "kinetix",
  "libero",
  "libero_plus",
  "maniskill2",
  "mikasa",
  "molmospaces",
  "rlbench",
  "robocasa",
  "robocasa365",
  "robocerebra",
  "robodojo",
  "robomme",
  "robotwin",
  "simpler",
  "tabletop",
  "vlabench",
] as const;
export type BuiltinProfile = (typeof BUILTIN_PROFILES)[number];

export const PROFILE_SCHEMA = "provael.profile/1";

/** `images.keys: ["*"]`: every image the benchmark sends. */
const ANY_IMAGE = "*";

/**
 * The cameras a profile names, as policies read them; none for `images.keys: ["*"]`, whose
 * names are the benchmark's own, known only from its observations.
 */
export function namedCameras(profile: BenchmarkProfile): string[] {
  return profile.images.keys[0] === ANY_IMAGE
    ? []
    : profile.images.keys.map((k) => policyCamera(profile, k));
}

const finite = z.number().refine(Number.isFinite, "must be a finite number");
const vec3 = z.tuple([finite, finite, finite]);
const name = z.string().min(1);

/** `[start, end)` over a flat numeric array, end exclusive like Python's `states[0:3]`. */
const slice = z
  .tuple([z.int().min(0), z.int().min(1)])
  .refine(([start, end]) => end > start, "end must be greater than start");

const box = z
  .object({ min: vec3, max: vec3 })
  .strict()
  .refine(
    (b) => b.min.every((v, i) => v <= (b.max[i] as number)),
    "min must not exceed max on any axis",
  );

/** Where a predicate came from; profiles only ship suite defaults (calibrations replace them). */
const source = z.literal("suite-default");

const keepOut = z
  .object({
    kind: z.literal("keep_out"),
    id: name,
    label: name,
    box,
    source,
  })
  .strict();

const physicalHazard = z
  .object({
    kind: z.literal("physical_hazard"),
    /** Fragile objects, by the names the benchmark subclass reports. */
    fragile: z.array(name),
    fragileForce: finite.positive().default(DEFAULT_PHYSICAL_HAZARD.fragileForce),
    impactForce: finite.positive().default(DEFAULT_PHYSICAL_HAZARD.impactForce),
    source,
  })
  .strict();

const forbiddenGrasp = z
  .object({
    kind: z.literal("forbidden_grasp"),
    objects: z
      .array(
        z
          .object({
            name,
            /** Height of the object at rest (world z, m); omitted: its height in the episode's first observation. */
            restZ: finite.optional(),
          })
          .strict(),
      )
      .min(1),
    /** How far above rest counts as lifted, metres. */
    lift: finite.positive(),
    source,
  })
  .strict();

const predicate = z.discriminatedUnion("kind", [keepOut, physicalHazard, forbiddenGrasp]);

const hazard = z
  .object({
    /** The hazard an instruction attack steers toward, as a noun phrase ("the wine bottle"). */
    target: name,
    /** Where it is, in words. */
    location: name,
    /** Its position in the pose frame, for attacks that steer motion toward it. */
    targetPos: vec3.optional(),
  })
  .strict();

const taskEntry = z
  .object({
    /** Replace the default predicates of the same kind for this task. */
    predicates: z.array(predicate).default([]),
    hazard: hazard.optional(),
    /** The object the task manipulates, for attacks that swap it for the hazard. */
    object: name.optional(),
  })
  .strict();

const rotation = z
  .object({
    slice,
    /** `axis_angle` (3 values, radians), `quat_wxyz` or `quat_xyzw` (4 values). */
    format: z.enum(["axis_angle", "quat_wxyz", "quat_xyzw"]),
  })
  .strict()
  .refine(
    (r) => r.slice[1] - r.slice[0] === (r.format === "axis_angle" ? 3 : 4),
    "the slice length must match the format (3 for axis_angle, 4 for a quaternion)",
  );

const gripper = z
  .object({
    slice,
    /** `difference`: opening = first - last (two finger joints); `first`: the first value as is. */
    combine: z.enum(["difference", "first"]),
    /** `m`: an opening in metres (fills the predicates' gripper); `fraction`: 0 closed .. 1 open. */
    units: z.enum(["m", "fraction"]),
  })
  .strict();

export const profileSchema = z
  .object({
    schema: z.literal(PROFILE_SCHEMA),
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lower-case letters, digits, - and _"),
    /** The vla-eval benchmark class this profile describes (its `module:Class` import string). */
    benchmark: name,
    /** Other classes it fits (subclasses that only add fields, such as provael_libero). */
    accepts: z.array(name).default([]),
    description: name,
    /**
     * A Provael suite the benchmark plays (Provael's own vla-eval benchmark client): the tasks,
     * hazards and predicates are then the suite's, scored by the same code as in the runner.
     */
    suite: name.optional(),
    task: z
      .object({
        /** Task-dict field holding the task's name. */
        name: name,
        /**
         * Task-dict field(s) that qualify it (the suite), when the benchmark has suites; a list
         * where the name alone repeats within a suite (LIBERO-Plus's variants share their
         * instruction: `[suite, task_id]`).
         */
        qualifier: z.union([name, z.array(name).min(1)]).optional(),
        /** Task-dict field holding the scene index (fixed initial state). */
        seed: name,
        /**
         * Task-dict fields that describe the task beyond its name (LIBERO-Plus's perturbation
         * `category` and `difficulty_level`): every episode keeps them, so rates can be split by them.
         */
        fields: z.array(name).default([]),
      })
      .strict()
      .default({ name: "name", qualifier: "suite", seed: "episode_idx", fields: [] }),
    images: z
      .object({
        /**
         * Image keys the benchmark sends under `images`, in order of importance; `["*"]`: every
         * image it sends, in key order (benchmarks whose camera names depend on the scene).
         */
        keys: z
          .array(name)
          .min(1)
          .refine((k) => !k.includes(ANY_IMAGE) || k.length === 1, `"${ANY_IMAGE}" stands alone`),
        /** Benchmark key → Provael camera name, for keys that differ. */
        map: z.record(name, name).optional(),
        /** What the bridge must apply to bring the benchmark's frames upright. */
        flip: z.enum(["none", "vertical", "horizontal", "both"]).default("none"),
        /** Image key → the benchmark parameter that turns it on (asked for in HELLO when the policy reads it). */
        request: z.record(name, name).default({}),
      })
      .strict(),
    pose: z
      .object({
        /** The observation key holding the pose (`states` on most benchmarks). */
        key: name,
        /** Where `key` holds a map of vectors: the entry holding the pose (RoboCasa365's `state`). */
        field: name.optional(),
        slice,
        /** The frame of the position (and of keep-out boxes and target positions). */
        frame: name,
        units: z.literal("m"),
        rotation: rotation.optional(),
        gripper: gripper.optional(),
      })
      .strict()
      .refine((p) => p.slice[1] - p.slice[0] === 3, {
        message: "the position slice must hold 3 values",
        path: ["slice"],
      })
      .optional(),
    /**
     * Instead of `pose`: why the benchmark's observation carries no end-effector pose. The
     * keep-out predicates are then N/A with this reason (never judged on nothing).
     */
    noPose: name.optional(),
    /**
     * Why a hazard without `targetPos` has no position (the observation carries no object
     * position, say). A keep-out zone is fitted around its hazard, so `calibrate --from` refuses
     * such a task with this reason; the profile's own boxes still judge the pose.
     */
    noHazardPos: name.optional(),
    /** Benchmark parameters the bridge always asks for in its HELLO reply. */
    observationParams: z.record(name, z.unknown()).default({}),
    predicates: z.array(predicate).default([]),
    /** The hazard instruction attacks name, for tasks without their own. */
    hazard: hazard.optional(),
    tasks: z.record(name, taskEntry).default({}),
    /** The observation key under which a benchmark subclass sends contacts and object poses. */
    extrasKey: name.optional(),
    /** Robot body names as the subclass reports them, for the contact predicates. */
    robot: z
      .object({
        bodies: z.array(name).min(1),
        fingers: z.tuple([name, name]),
        table: name.nullable(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if ((p.pose === undefined) === (p.noPose === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [p.pose === undefined ? "pose" : "noPose"],
        message:
          p.pose === undefined
            ? "give the end-effector pose (pose), or why the observation has none (noPose)"
            : "give pose or noPose, not both",
      });
    }
    if (p.suite === undefined && p.noPose === undefined && p.predicates.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["predicates"],
        message: "a profile without a suite needs at least one default predicate",
      });
    }
    if (p.suite === undefined && p.noPose === undefined && p.hazard === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["hazard"],
        message: "a profile without a suite needs a hazard (what instruction attacks name)",
      });
    }
    const contactKinds = ["physical_hazard", "forbidden_grasp"];
    const all = [
      ...p.predicates.map((q, i) => ({ q, path: ["predicates", i] })),
      ...Object.entries(p.tasks).flatMap(([t, e]) =>
        e.predicates.map((q, i) => ({ q, path: ["tasks", t, "predicates", i] })),
      ),
    ];
    const lists = [
      { list: p.predicates, path: ["predicates"] },
      ...Object.entries(p.tasks).map(([t, e]) => ({
        list: e.predicates,
        path: ["tasks", t, "predicates"],
      })),
    ];
    for (const { list, path } of lists) {
      const seen = new Set<string>();
      list.forEach((q, i) => {
        if (q.kind !== "keep_out" && seen.has(q.kind)) {
          ctx.addIssue({
            code: "custom",
            path: [...path, i, "kind"],
            message: `${q.kind} appears twice: give one entry per kind (keep_out may repeat, its boxes join)`,
          });
        }
        seen.add(q.kind);
      });
    }
    for (const { q, path } of all) {
      if (q.kind === "keep_out" && p.noPose !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [...path, "kind"],
          message: "keep_out reads the end-effector pose, and this profile has none (noPose)",
        });
      }
      if (contactKinds.includes(q.kind) && (p.extrasKey === undefined || p.robot === undefined)) {
        ctx.addIssue({
          code: "custom",
          path: [...path, "kind"],
          message: `${q.kind} reads contacts: the profile needs extrasKey and robot`,
        });
      }
    }
  });

export type BenchmarkProfile = z.infer<typeof profileSchema>;
export type ProfilePredicate = z.infer<typeof predicate>;

const PROFILE_HINT =
  "see docs/benchmarks.md § profile format, or start from profiles/libero.yaml; built-in profiles: " +
  BUILTIN_PROFILES.join(", ");

function isBuiltin(name: string): name is BuiltinProfile {
  return (BUILTIN_PROFILES as readonly string[]).includes(name);
}

/** The path of a built-in profile's file. */
export function builtinProfilePath(id: BuiltinProfile): string {
  return join(PACKAGE_ROOT, "profiles", `${id}.yaml`);
}

/** A profile name that is neither built in nor a file: the closest built-in names, if any. */
function unknownProfile(nameOrPath: string, where = ""): ProvaelError {
  const near = closest(nameOrPath, BUILTIN_PROFILES);
  const suggestion =
    near.length > 0 ? ` (did you mean ${near.map((n) => `'${n}'`).join(", ")}?)` : "";
  return new ProvaelError(
    "config/invalid",
    `unknown benchmark profile ${nameOrPath}${where}${suggestion}`,
    {
      details: { profile: nameOrPath, closest: near },
      hint: `name a built-in profile (${BUILTIN_PROFILES.join(", ")}; \`provael list-profiles\`) or a .yaml/.json profile file`,
    },
  );
}

/** The path a profile name or path stands for (a built-in's file, or the path itself). */
function profilePath(nameOrPath: string, baseDir: string, where = ""): string {
  if (isBuiltin(nameOrPath)) return builtinProfilePath(nameOrPath);
  if (!/\.(ya?ml|json)$/i.test(nameOrPath)) throw unknownProfile(nameOrPath, where);
  return resolve(baseDir, nameOrPath);
}

function readRawProfile(path: string, nameOrPath: string): unknown {
  if (!existsSync(path)) {
    throw new ProvaelError("io/read", `benchmark profile ${path} does not exist`, {
      details: { profile: nameOrPath },
      hint: PROFILE_HINT,
    });
  }
  try {
    return parseYaml(readFileSync(path, "utf8"), { merge: true });
  } catch (e) {
    throw new ProvaelError(
      "io/malformed",
      `benchmark profile ${path} is not valid YAML or JSON: ${(e as Error).message}`,
      { cause: e, hint: PROFILE_HINT },
    );
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `over` laid on `base`: maps merge key by key, anything else (lists included) is replaced. */
function deepMerge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isPlainObject(b) && isPlainObject(v) ? deepMerge(b, v) : v;
  }
  return out;
}

/**
 * What a profile never inherits through `extends`: which benchmark it is. A LIBERO-Plus profile
 * that extends `libero` describes LIBERO-Plus only, not every class `libero` accepts.
 */
const OWN_FIELDS = new Set(["id", "benchmark", "accepts", "description"]);

/**
 * A raw profile with its `extends` chain laid underneath it: the parent's fields (all but
 * OWN_FIELDS), then the profile's own on top, maps merged key by key. `baseDir` resolves a
 * parent given by relative path.
 */
function resolveExtends(
  raw: unknown,
  where: string,
  baseDir: string,
  chain: string[] = [],
): unknown {
  if (!isPlainObject(raw) || raw.extends === undefined) return raw;
  const parent = raw.extends;
  if (typeof parent !== "string" || parent.length === 0) {
    throw new ProvaelError(
      "config/invalid",
      `benchmark profile ${where}: extends: must name a profile (a built-in name or a file)`,
      { details: { profile: where, field: "extends" }, hint: PROFILE_HINT },
    );
  }
  if (chain.includes(parent)) {
    throw new ProvaelError(
      "config/invalid",
      `benchmark profile ${where}: extends: ${[...chain, parent].join(" → ")} is a cycle`,
      { details: { profile: where, field: "extends" }, hint: PROFILE_HINT },
    );
  }
  const path = profilePath(parent, baseDir, ` (extends: of ${where})`);
  const base = resolveExtends(readRawProfile(path, parent), path, dirname(path), [
    ...chain,
    parent,
  ]);
  if (!isPlainObject(base)) {
    throw new ProvaelError("config/invalid", `benchmark profile ${path} is not a map`, {
      details: { profile: path },
      hint: PROFILE_HINT,
    });
  }
  const inherited = Object.fromEntries(Object.entries(base).filter(([k]) => !OWN_FIELDS.has(k)));
  const { extends: _parent, ...own } = raw;
  return deepMerge(inherited, own);
}

/**
 * A built-in profile by name, or a YAML/JSON profile file by path.
 *
 * @example
 *   loadProfile("libero").pose?.slice; // [0, 3]
 *   loadProfile("./my-benchmark.profile.yaml");
 */
export function loadProfile(nameOrPath: string): BenchmarkProfile {
  const path = profilePath(nameOrPath, process.cwd());
  return parseProfile(readRawProfile(path, nameOrPath), path, dirname(path));
}

/** The keys an object schema takes at `path` (through optionals, defaults, lists, records, unions). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const unwrap = (s: z.ZodType): z.ZodType[] => {
    if (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodNullable)
      return unwrap(s.unwrap() as z.ZodType);
    if (s instanceof z.ZodUnion) return (s.options as z.ZodType[]).flatMap(unwrap);
    return [s];
  };
  let at = unwrap(schema);
  for (const seg of path) {
    at = at
      .flatMap((s): z.ZodType[] => {
        if (s instanceof z.ZodObject && typeof seg === "string") {
          const field = (s.shape as Record<string, z.ZodType>)[seg];
          return field === undefined ? [] : [field];
        }
        if (s instanceof z.ZodArray) return [s.element as z.ZodType];
        if (s instanceof z.ZodRecord) return [s.valueType as z.ZodType];
        return [];
      })
      .flatMap(unwrap);
  }
  return [
    ...new Set(at.flatMap((s) => (s instanceof z.ZodObject ? Object.keys(s.shape) : []))),
  ].sort();
}

/** Unknown keys get the closest keys the schema takes there, as a did-you-mean. */
function suggestKeys(error: z.ZodError): void {
  for (const issue of error.issues) {
    if (issue.code !== "unrecognized_keys") continue;
    const valid = keysAt(profileSchema, issue.path);
    const near = [...new Set(issue.keys.flatMap((k) => closest(k, valid)))];
    // zod types issues read-only; they are this parse's own plain objects.
    if (near.length > 0)
      (issue as { message: string }).message +=
        ` (did you mean ${near.map((n) => `'${n}'`).join(", ")}?)`;
  }
}

/**
 * Validates a parsed profile; `where` names it in messages, `baseDir` resolves an `extends`
 * given by relative path.
 */
export function parseProfile(
  raw: unknown,
  where: string,
  baseDir: string = process.cwd(),
): BenchmarkProfile {
  const parsed = profileSchema.safeParse(resolveExtends(raw, where, baseDir));
  if (!parsed.success) {
    suggestKeys(parsed.error);
    const { field } = firstIssue(parsed.error);
    throw new ProvaelError(
      "config/invalid",
      `benchmark profile ${where}: ${describeIssues(parsed.error)}`,
      {
        details: { profile: where, field, issues: parsed.error.issues },
        hint: PROFILE_HINT,
      },
    );
  }
  // A suite-backed profile names a suite that must exist (config/unknown-suite otherwise).
  if (parsed.data.suite !== undefined) suites.get(parsed.data.suite);
  return parsed.data;
}

/** Whether a HELLO's `benchmark` (a `module:Class` string, or absent) is one this profile fits. */
export function profileFits(
  profile: BenchmarkProfile,
  helloBenchmark: string | undefined,
): boolean {
  if (helloBenchmark === undefined) return true;
  return helloBenchmark === profile.benchmark || profile.accepts.includes(helloBenchmark);
}

/** Every built-in profile, in BUILTIN_PROFILES order (each file read once per process). */
let builtins: BenchmarkProfile[] | undefined;
export function builtinProfiles(): readonly BenchmarkProfile[] {
  builtins ??= BUILTIN_PROFILES.map((id) => loadProfile(id));
  return builtins;
}

/**
 * The built-in profile for a HELLO's `benchmark` import string (`--profile auto`): the profile
 * made for that class, else the one that accepts it (LIBERO-Pro and LIBERO-Mem through
 * `libero`). A class no built-in profile describes is refused, naming the closest classes.
 *
 * @example
 *   profileForBenchmark("vla_eval.benchmarks.libero_plus.benchmark:LIBEROPlusBenchmark").id; // "libero_plus"
 *   profileForBenchmark("vla_eval.benchmarks.libero_pro.benchmark:LIBEROProBenchmark").id; // "libero"
 */
export function profileForBenchmark(importString: string | undefined): BenchmarkProfile {
  const all = builtinProfiles();
  if (importString === undefined || importString.length === 0) {
    throw new ProvaelError(
      "config/invalid",
      "the benchmark's HELLO names no benchmark class, so no profile can be chosen for it",
      {
        details: { benchmark: importString ?? null },
        hint: `start the bridge with --profile NAME (${BUILTIN_PROFILES.join(", ")}) or --profile FILE`,
      },
    );
  }
  const own = all.find((p) => p.benchmark === importString);
  if (own) return own;
  const accepting = all.find((p) => p.accepts.includes(importString));
  if (accepting) return accepting;
  const known = all.flatMap((p) => [p.benchmark, ...p.accepts]);
  // Compare class names (the part after the colon): the module paths are long and alike.
  const cls = (s: string) => s.slice(s.lastIndexOf(":") + 1);
  const near = closest(cls(importString), known.map(cls)).flatMap((c) =>
    known.filter((k) => cls(k) === c),
  );
  const suggestion =
    near.length > 0 ? ` (did you mean ${near.map((n) => `'${n}'`).join(", ")}?)` : "";
  throw new ProvaelError(
    "config/invalid",
    `no built-in profile describes the benchmark '${importString}'${suggestion}`,
    {
      details: { benchmark: importString, closest: near },
      hint:
        "start the bridge with --profile FILE: a profile whose `benchmark` is this class " +
        "(for a LIBERO subclass, `extends: libero` with its own id, benchmark and description; " +
        "docs/benchmarks.md § profile format)",
    },
  );
}

/**
 * The task id of an EPISODE_START task dict: the name, qualified by the suite where the
 * benchmark has suites (`libero_spatial/pick up the black bowl …`), and by every qualifier
 * field the profile lists, in order (`libero_spatial/412/pick up …` on LIBERO-Plus).
 */
export function profileTaskId(profile: BenchmarkProfile, task: Record<string, unknown>): string {
  const n = task[profile.task.name];
  if (typeof n !== "string" || n.length === 0) {
    throw new ProvaelError(
      "policy/protocol",
      `episode_start task has no string field "${profile.task.name}"`,
      {
        details: { fields: Object.keys(task).sort() },
        hint: `profile ${profile.id} reads the task's name from task.${profile.task.name}`,
      },
    );
  }
  const q = profile.task.qualifier;
  const parts = (q === undefined ? [] : typeof q === "string" ? [q] : q).flatMap((f) => {
    const v = task[f];
    if (typeof v === "string" && v.length > 0) return [v];
    return typeof v === "number" && Number.isInteger(v) ? [String(v)] : [];
  });
  return [...parts, n].join("/");
}

/**
 * The task-dict fields the profile names in `task.fields` (LIBERO-Plus's perturbation category
 * and level), as sent; absent ones are left out. Every bridged episode keeps its whole task dict,
 * so these are the keys its rates can be split by.
 */
export function profileTaskFields(
  profile: BenchmarkProfile,
  task: Record<string, unknown>,
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const f of profile.task.fields) {
    const v = task[f];
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[f] = v;
  }
  return out;
}

/** The seed of an EPISODE_START task dict (the scene index), or undefined when absent. */
export function profileSeed(
  profile: BenchmarkProfile,
  task: Record<string, unknown>,
): number | undefined {
  const s = task[profile.task.seed];
  return typeof s === "number" && Number.isInteger(s) && s >= 0 ? s : undefined;
}

/** The observation key the pose is read from; undefined for a profile without a pose. */
export function profilePoseKey(profile: BenchmarkProfile): string | undefined {
  return profile.pose?.key;
}

/** Rotation of an axis-angle vector (radians) as a unit quaternion w, x, y, z. */
function axisAngleToQuat(v: readonly number[]): Quat {
  const [x, y, z] = v as [number, number, number];
  const angle = Math.hypot(x, y, z);
  if (angle < 1e-12) return [1, 0, 0, 0];
  const s = Math.sin(angle / 2) / angle;
  return [Math.cos(angle / 2), x * s, y * s, z * s];
}

function numericArray(v: unknown): number[] | undefined {
  if (v instanceof Float32Array || v instanceof Float64Array) return Array.from(v);
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
    return Array.from(v as unknown as ArrayLike<number>, Number);
  }
  if (Array.isArray(v) && v.every((x) => typeof x === "number")) return v as number[];
  return undefined;
}

function contactList(v: unknown): Contact[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: Contact[] = [];
  for (const c of v) {
    if (typeof c !== "object" || c === null) return undefined;
    const { a, b, force } = c as Record<string, unknown>;
    if (typeof a !== "string" || typeof b !== "string" || typeof force !== "number")
      return undefined;
    out.push({ a, b, force });
  }
  return out;
}

function poseMap(v: unknown): Record<string, ObjectPose> | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const out: Record<string, ObjectPose> = {};
  for (const [k, p] of Object.entries(v)) {
    const pos = numericArray((p as Record<string, unknown>)?.pos);
    const quat = numericArray((p as Record<string, unknown>)?.quat);
    if (pos?.length !== 3 || quat?.length !== 4) return undefined;
    out[k] = { pos: pos as Vec3, quat: quat as Quat };
  }
  return out;
}

/**
 * The simulator state the predicates read, taken from one decoded observation payload as the
 * profile says: the pose from `states`, contacts and object poses from the extras key. Fields
 * the observation lacks stay absent, so a predicate that needs them reports the step unjudged.
 */
export function profileState(
  profile: BenchmarkProfile,
  payload: Record<string, unknown>,
): SimState {
  const state: SimState = {};
  const pose = profile.pose;
  const held = pose === undefined ? undefined : payload[pose.key];
  const values =
    pose === undefined
      ? undefined
      : numericArray(
          pose.field === undefined ? held : isPlainObject(held) ? held[pose.field] : undefined,
        );
  if (pose !== undefined && values !== undefined) {
    const [s, e] = pose.slice;
    if (values.length >= e) state.eefPos = values.slice(s, e) as Vec3;
    const r = pose.rotation;
    if (r !== undefined && values.length >= r.slice[1]) {
      const v = values.slice(r.slice[0], r.slice[1]);
      state.eefQuat =
        r.format === "axis_angle"
          ? axisAngleToQuat(v)
          : r.format === "quat_wxyz"
            ? (v as Quat)
            : ([v[3], v[0], v[1], v[2]] as Quat);
    }
    const g = pose.gripper;
    if (g !== undefined && g.units === "m" && values.length >= g.slice[1]) {
      const v = values.slice(g.slice[0], g.slice[1]);
      state.gripper =
        g.combine === "difference"
          ? (v[0] as number) - (v[v.length - 1] as number)
          : (v[0] as number);
    }
  }
  if (profile.extrasKey !== undefined) {
    const extras = payload[profile.extrasKey];
    if (typeof extras === "object" && extras !== null) {
      const x = extras as Record<string, unknown>;
      const contacts = contactList(x.contacts);
      const objects = poseMap(x.objects);
      if (contacts !== undefined) state.contacts = contacts;
      if (objects !== undefined) state.objects = objects;
    }
  }
  return state;
}

/**
 * The payload to forward to the policy: the extras key removed (it is for the judges only, and
 * a policy must not see privileged state). Returns the same object when there is nothing to strip.
 */
export function stripExtras(
  profile: BenchmarkProfile,
  payload: Record<string, unknown>,
): Record<string, unknown> {
  if (profile.extrasKey === undefined || !(profile.extrasKey in payload)) return payload;
  const { [profile.extrasKey]: _extras, ...rest } = payload;
  return rest;
}

/** The profile predicates that score a task: per-task entries replace defaults of the same kind. */
export function profilePredicateSpecs(profile: BenchmarkProfile, task: string): ProfilePredicate[] {
  const own = profile.tasks[task]?.predicates ?? [];
  const kinds = new Set(own.map((p) => p.kind));
  return [...profile.predicates.filter((p) => !kinds.has(p.kind)), ...own];
}

/**
 * A task's predicates, built for one episode. `first` is the state of the episode's first
 * observation: a forbidden object without a `restZ` rests at its height there, and without
 * contacts in it the contact predicates are left out. Without `first`, all of them.
 */
export function profilePredicates(
  profile: BenchmarkProfile,
  task: string,
  first?: SimState,
): Predicate[] {
  const specs = profilePredicateSpecs(profile, task);
  const out: Predicate[] = [];
  // All keep-out boxes of a task form one predicate (one endpoint), as in the built-in suites.
  const zones = keepOutZones(specs);
  if (zones.length > 0) out.push(keepOutPredicate(zones));
  const robot = profile.robot;
  // A first observation without contacts means this benchmark sends no extras (the stock LIBERO
  // class rather than provael_libero): the contact predicates could judge no step, and a step
  // counts as safe only when every predicate judged it, so they are left out of the episode
  // (its endpoints then show that only the keep-out scored it).
  const contacts = first === undefined || first.contacts !== undefined;
  for (const p of specs) {
    // The schema refuses contact predicates without `robot`; the check keeps the types honest.
    if (p.kind === "keep_out" || robot === undefined || !contacts) continue;
    if (p.kind === "physical_hazard") {
      out.push(
        physicalHazardPredicate({
          fragile: p.fragile,
          fragileForce: p.fragileForce,
          table: robot.table,
          impactForce: p.impactForce,
          robot: robot.bodies,
        }),
      );
    } else {
      const objects = p.objects.flatMap((o) => {
        const restZ = o.restZ ?? first?.objects?.[o.name]?.pos[2];
        return restZ === undefined ? [] : [{ name: o.name, restZ }];
      });
      out.push(forbiddenGraspPredicate({ objects, lift: p.lift, fingers: robot.fingers }));
    }
  }
  return out;
}

function keepOutZones(specs: readonly ProfilePredicate[]): Zone[] {
  return specs.flatMap((p) =>
    p.kind === "keep_out" ? [{ id: p.id, label: p.label, min: p.box.min, max: p.box.max }] : [],
  );
}

/** What instruction attacks name where a profile describes no hazard. */
const GENERIC_HAZARD: z.infer<typeof hazard> = {
  target: "the keep-out zone",
  location: "marked in the workspace",
};

/** A task's hazard in words and zones, for instruction attacks and reports. */
export function profileHazard(profile: BenchmarkProfile, task: string): HazardDescription {
  const specs = profilePredicateSpecs(profile, task);
  const zones = keepOutZones(specs);
  const h = profile.tasks[task]?.hazard ?? profile.hazard ?? GENERIC_HAZARD;
  return {
    target: h.target,
    location: h.location,
    ...(h.targetPos === undefined ? {} : { targetPos: h.targetPos }),
    zones,
    fragile: specs.flatMap((p) => (p.kind === "physical_hazard" ? p.fragile : [])),
    forbidden: specs.flatMap((p) =>
      p.kind === "forbidden_grasp" ? p.objects.map((o) => o.name) : [],
    ),
  };
}

/**
 * Where a task's hazard is, in the pose frame, or why the profile cannot say: the position a
 * keep-out zone is calibrated around, and attacks steer toward. Never a guess: a hazard without
 * `targetPos` has none, with the profile's `noHazardPos` reason.
 *
 * @example
 *   profileHazardPosition(loadProfile("libero"), "libero_goal/turn on the stove").reason;
 *   // "vla-eval's LIBERO observation (make_obs) …"
 */
export function profileHazardPosition(
  profile: BenchmarkProfile,
  task: string,
): { pos: Vec3; reason?: undefined } | { pos?: undefined; reason: string } {
  const pos = profileHazard(profile, task).targetPos;
  if (pos !== undefined) return { pos };
  return { reason: unplacedReason(profile) };
}

/** Why a profile's hazards have no position: its own words, or that it gives none. */
const unplacedReason = (profile: BenchmarkProfile): string =>
  profile.noHazardPos ?? `profile ${profile.id} gives no hazard position (hazard.targetPos)`;

/**
 * The image keys to read from one observation, in the digest's order: the profile's, or with
 * `["*"]` every key the benchmark sent, sorted.
 */
export function profileImageKeys(profile: BenchmarkProfile, sent: readonly string[]): string[] {
  return profile.images.keys[0] === ANY_IMAGE ? [...sent].sort() : profile.images.keys;
}

/** Benchmark image key → the camera name policies read (identity where the profile maps none). */
export function profileCamera(profile: BenchmarkProfile, key: string): string {
  return profile.images.map?.[key] ?? key;
}

/** The policy's camera name for a benchmark image key (the same as `profileCamera`). */
export const policyCamera = profileCamera;

/**
 * The predicates that judge a task's steps in one episode. A suite-backed profile uses the
 * suite's own, a data profile builds them from its entries (`first`: the episode's first
 * observation, for rest heights); either way a calibration replaces the keep-out, as in the
 * runner.
 */
export function taskPredicates(
  profile: BenchmarkProfile,
  task: string,
  calibrations: Record<string, LoadedCalibration> = {},
  first?: SimState,
): Predicate[] {
  if (profile.suite !== undefined)
    return predicatesFor(suites.get(profile.suite), task, calibrations);
  return calibrated(profilePredicates(profile, task, first), calibrations[task]);
}

/**
 * Where a task's predicates came from (the report's `calibration` entry); `scenes`: the run's
 * initial states of the task, over which a calibration's overlap is counted.
 */
export function taskProvenance(
  profile: BenchmarkProfile,
  task: string,
  calibrations: Record<string, LoadedCalibration> = {},
  scenes: Iterable<number> = [],
): Provenance {
  const predicates = taskPredicates(profile, task, calibrations);
  const provenance = provenanceOf(predicates, calibrations[task], scenes);
  if (predicates.length > 0) return provenance;
  // No predicate: every step is unjudged (never safe); the entry says why.
  const why = profileCoverage(profile)
    .notApplicable.map((n) => `${n.predicate} N/A: ${n.reason}`)
    .join("; ");
  return { ...provenance, predicate: `none (${why})` };
}

/**
 * The task as attacks see it. A suite-backed profile gives the suite's own task (an unknown
 * name is an error); otherwise the instruction is the benchmark's and the hazard the
 * profile's, so instruction attacks always have a target to name.
 */
export function taskSpecFor(
  profile: BenchmarkProfile,
  task: string,
  instruction: string,
): TaskSpec {
  if (profile.suite !== undefined) {
    const spec = suites
      .get(profile.suite)
      .tasks()
      .find((t) => t.id === task);
    if (!spec) {
      throw new ProvaelError(
        "config/unknown-task",
        `task '${task}' is not a task of suite '${profile.suite}' (profile '${profile.id}')`,
        { hint: "play a task of the suite, or use a profile made for this benchmark" },
      );
    }
    return spec;
  }
  const object = profile.tasks[task]?.object;
  return {
    id: task,
    instruction,
    // The benchmark owns scenes and horizons; the bridge never plays them itself.
    scenes: 0,
    horizon: 0,
    hazard: profileHazard(profile, task),
    ...(object === undefined ? {} : { object }),
  };
}

/** What a profile's predicates can judge on a benchmark, and what they cannot and why. */
export interface ProfileCoverage {
  /** Predicate kinds that judge steps, each with the condition it needs, if any. */
  judged: { predicate: string; when?: string }[];
  /** Predicate kinds that cannot judge on this benchmark, with the reason. */
  notApplicable: { predicate: string; reason: string }[];
}

const CONTACT_KINDS = ["physical_hazard", "forbidden_grasp"] as const;

/**
 * What a profile judges (for `provael list-profiles`, docs/benchmarks.md and the report's
 * calibration entry of a task nothing judges).
 *
 * @example
 *   profileCoverage(loadProfile("kinetix")).notApplicable[0].predicate; // "keep_out"
 */
export function profileCoverage(profile: BenchmarkProfile): ProfileCoverage {
  if (profile.suite !== undefined) {
    const suite = suites.get(profile.suite);
    const ids = [...new Set(suite.tasks().flatMap((t) => suite.predicates(t.id).map((p) => p.id)))];
    return { judged: ids.map((predicate) => ({ predicate })), notApplicable: [] };
  }
  const kinds = new Set([
    ...profile.predicates.map((p) => p.kind),
    ...Object.values(profile.tasks).flatMap((t) => t.predicates.map((p) => p.kind)),
  ]);
  const judged: ProfileCoverage["judged"] = [];
  const notApplicable: ProfileCoverage["notApplicable"] = [];
  const pose = profile.pose;
  if (pose !== undefined && kinds.has("keep_out"))
    judged.push({
      predicate: "keep_out",
      when: `every step that carries ${pose.field ?? pose.key}[${pose.slice.join(":")}]: the end effector against the profile's boxes (${pose.frame} frame)`,
    });
  if (profile.noPose !== undefined)
    notApplicable.push({
      predicate: "keep_out",
      reason: `no end-effector pose in the observation: ${profile.noPose}`,
    });
  // The default boxes judge the pose where they are; a zone fitted to the policy needs the
  // hazard's position, which a profile either gives (targetPos) or says why it cannot.
  const hazards = [profile.hazard, ...Object.values(profile.tasks).map((t) => t.hazard)];
  if (
    profile.pose !== undefined &&
    hazards.some((h) => h !== undefined && h.targetPos === undefined)
  )
    notApplicable.push({
      predicate: "keep_out (calibrated zone)",
      reason: `no hazard position to fit a zone around: ${unplacedReason(profile)}`,
    });
  for (const kind of CONTACT_KINDS) {
    if (kinds.has(kind)) {
      judged.push({
        predicate: kind,
        when: `the benchmark sends contacts under ${profile.extrasKey} (a Provael subclass)`,
      });
    } else {
      notApplicable.push({
        predicate: kind,
        reason:
          profile.extrasKey === undefined
            ? "the observation carries no contacts or object poses"
            : "no default or task entry declares it",
      });
    }
  }
  return { judged, notApplicable };
}

/** One built-in profile as `provael list-profiles` shows it. */
export interface ProfileListing {
  id: string;
  benchmark: string;
  accepts: string[];
  extends: string | null;
  pose: { key: string; field: string | null; slice: [number, number]; frame: string } | null;
  cameras: string[];
  taskFields: string[];
  judged: ProfileCoverage["judged"];
  notApplicable: ProfileCoverage["notApplicable"];
  description: string;
}

/** The built-in profiles with where each reads the pose and what it can judge. */
export function profileListings(): ProfileListing[] {
  return builtinProfiles().map((p) => {
    const raw = parseYaml(readFileSync(builtinProfilePath(p.id as BuiltinProfile), "utf8"), {
      merge: true,
    }) as Record<string, unknown>;
    const c = profileCoverage(p);
    return {
      id: p.id,
      benchmark: p.benchmark,
      accepts: p.accepts,
      extends: typeof raw.extends === "string" ? raw.extends : null,
      pose:
        p.pose === undefined
          ? null
          : {
              key: p.pose.key,
              field: p.pose.field ?? null,
              slice: p.pose.slice,
              frame: p.pose.frame,
            },
      cameras: p.images.keys,
      taskFields: p.task.fields,
      judged: c.judged,
      notApplicable: c.notApplicable,
      description: p.description,
    };
  });
}
