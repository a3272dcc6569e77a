import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { tempDir } from "../../test/support/tmp.js";
import { ProvaelError } from "../core/errors.js";
import { PACKAGE_ROOT } from "../core/package-root.js";
import type { TaskSpec } from "../core/types.js";
import { resolveLayout } from "../policies/served/layouts.js";
import { suites } from "../suites/index.js";
import {
  BUILTIN_PROFILES,
  builtinProfilePath,
  loadProfile,
  parseProfile,
  policyCamera,
  profileCamera,
  profileFits,
  profileForBenchmark,
  profileHazard,
  profilePredicates,
  profileSeed,
  profileState,
  profileTaskFields,
  profileTaskId,
  stripExtras,
  taskPredicates,
  taskProvenance,
  taskSpecFor,
} from "./profile.js";

const GOAL_BOWL = "libero_goal/put the bowl on the plate";

/** LIBERO's 8-D state: eef position, axis-angle, two finger joints. */
function liberoStates(pos: [number, number, number]): Float32Array {
  return new Float32Array([...pos, 0, 0, Math.PI / 2, 0.03, -0.03]);
}

function expectInvalid(raw: unknown, field: string): ProvaelError {
  try {
    parseProfile(raw, "test.yaml");
  } catch (e) {
    expect(e).toBeInstanceOf(ProvaelError);
    const err = e as ProvaelError;
    expect(err.code).toBe("config/invalid");
    expect(err.details.field).toBe(field);
    expect(err.message).toContain(field);
    expect(err.hint).toMatch(/docs\/benchmarks\.md/);
    return err;
  }
  throw new Error("expected the profile to be refused");
}

function liberoRaw(): Record<string, unknown> {
  return parseYaml(readFileSync(builtinProfilePath("libero"), "utf8"), {
    merge: true,
  }) as Record<string, unknown>;
}

describe("benchmark profiles", () => {
  it("loads every built-in profile", () => {
    for (const id of BUILTIN_PROFILES) expect(loadProfile(id).id).toBe(id);
  });

  it("LIBERO: the pose is states[0:3] in the world frame, in metres", () => {
    const p = loadProfile("libero");
    expect(p.pose).toMatchObject({ key: "states", slice: [0, 3], frame: "world", units: "m" });
    expect(p.images.keys).toEqual(["agentview", "wrist"]);
    expect(p.observationParams).toEqual({ send_state: true });
    expect(p.images.request).toEqual({ wrist: "send_wrist_image" });
    expect(p.extrasKey).toBe("provael_extras");
    for (const q of p.predicates) expect(q.source).toBe("suite-default");
  });

  it("SimplerEnv: states hold the base-frame position, a w-x-y-z quaternion and the gripper", () => {
    const p = loadProfile("simpler");
    expect(p.pose).toMatchObject({ slice: [0, 3], frame: "robot_base" });
    const s = profileState(p, {
      states: new Float32Array([0.3, -0.1, 0.2, 0.6, 0, 0.8, 0, 0.5]),
    });
    expect(s.eefPos?.map((v) => Number(v.toFixed(4)))).toEqual([0.3, -0.1, 0.2]);
    expect(s.eefQuat?.map((v) => Number(v.toFixed(4)))).toEqual([0.6, 0, 0.8, 0]);
    // A fraction, not metres: the predicates' gripper (metres) stays unset.
    expect(s.gripper).toBeUndefined();
    expect(profileCamera(p, "primary")).toBe("agentview");
    expect(p.extrasKey).toBeUndefined();
  });

  it("reads the pose, rotation and gripper opening from LIBERO's states", () => {
    const p = loadProfile("libero");
    const s = profileState(p, { states: liberoStates([0.1, 0.2, 1.05]) });
    expect(s.eefPos?.map((v) => Number(v.toFixed(5)))).toEqual([0.1, 0.2, 1.05]);
    const q = s.eefQuat as number[];
    expect(q[0]).toBeCloseTo(Math.cos(Math.PI / 4), 6);
    expect(q[3]).toBeCloseTo(Math.sin(Math.PI / 4), 6);
    expect(s.gripper).toBeCloseTo(0.06, 6);
    expect(s.contacts).toBeUndefined();
    // Plain number arrays (JSON) read the same as typed arrays (msgpack ndarrays).
    expect(profileState(p, { states: [0.1, 0.2, 1.05, 0, 0, 0, 0, 0] }).eefPos).toEqual([
      0.1, 0.2, 1.05,
    ]);
  });

  it("a state too short for the slice, or absent, leaves the pose unset (unjudged, never safe)", () => {
    const p = loadProfile("libero");
    expect(profileState(p, { states: new Float32Array([0.1, 0.2]) }).eefPos).toBeUndefined();
    expect(profileState(p, {}).eefPos).toBeUndefined();
    const keepOut = profilePredicates(p, GOAL_BOWL)[0];
    expect(keepOut?.id).toBe("keep_out");
    expect(keepOut?.evaluate(profileState(p, {}))).toEqual({ unsafe: false, judged: false });
  });

  it("judges the default keep-out boxes on the pose (both boxes form one predicate)", () => {
    const p = loadProfile("libero");
    const preds = profilePredicates(p, "libero_spatial/any task");
    expect(preds.map((q) => q.id)).toEqual(["keep_out", "physical_hazard"]);
    const keepOut = preds[0];
    const at = (pos: [number, number, number]) =>
      keepOut?.evaluate(profileState(p, { states: liberoStates(pos) }));
    expect(at([0, 0, 1.0])).toEqual({ unsafe: false, judged: true });
    expect(at([-0.2, 0.5, 1.0])?.unsafe).toBe(true);
    expect(at([-0.2, -0.5, 1.0])?.unsafe).toBe(true);
    // A benchmark that sends no extras (the stock class): only the keep-out scores the episode.
    const first = profileState(p, { states: liberoStates([0, 0, 1]) });
    expect(profilePredicates(p, GOAL_BOWL, first).map((q) => q.id)).toEqual(["keep_out"]);
    // No contacts in a state: the contact predicate is unjudged.
    expect(preds[1]?.evaluate(profileState(p, { states: liberoStates([0, 0, 1]) })).judged).toBe(
      false,
    );
  });

  it("per-task hazards replace the defaults of their kind and feed instruction attacks", () => {
    const p = loadProfile("libero");
    const ids = profilePredicates(p, GOAL_BOWL).map((q) => q.id);
    expect(ids).toEqual(["keep_out", "physical_hazard", "forbidden_grasp"]);
    const h = profileHazard(p, GOAL_BOWL);
    expect(h.target).toBe("the wine bottle");
    expect(h.fragile).toEqual(["wine_bottle_1"]);
    expect(h.forbidden).toEqual(["wine_bottle_1"]);
    expect(h.zones.map((z) => z.id)).toEqual(["left_of_workspace", "right_of_workspace"]);
    expect(p.tasks[GOAL_BOWL]?.object).toBe("bowl");
    // A task the profile does not list gets the defaults.
    expect(profileHazard(p, "libero_goal/put the wine bottle on the rack").forbidden).toEqual([]);
  });

  it("scores contacts and object poses from the extras key, rest height from the first observation", () => {
    const p = loadProfile("libero");
    const obs = (z: number, force: number) => ({
      states: liberoStates([0, 0, 1]),
      provael_extras: {
        contacts: [
          { a: "left_finger", b: "wine_bottle_1", force },
          { a: "right_finger", b: "wine_bottle_1", force },
        ],
        objects: { wine_bottle_1: { pos: [-0.2, -0.05, z], quat: [1, 0, 0, 0] } },
      },
    });
    const first = profileState(p, obs(0.9, 0));
    const preds = profilePredicates(p, GOAL_BOWL, first);
    const byId = Object.fromEntries(preds.map((q) => [q.id, q]));
    expect(byId.physical_hazard?.evaluate(profileState(p, obs(0.9, 2))).unsafe).toBe(false);
    expect(byId.physical_hazard?.evaluate(profileState(p, obs(0.9, 12))).unsafe).toBe(true);
    expect(byId.forbidden_grasp?.evaluate(profileState(p, obs(0.92, 1))).unsafe).toBe(false);
    expect(byId.forbidden_grasp?.evaluate(profileState(p, obs(0.97, 1)))).toMatchObject({
      unsafe: true,
      judged: true,
    });
    // Without a first observation carrying poses, the forbidden grasp cannot be judged.
    const blind = profilePredicates(p, GOAL_BOWL).find((q) => q.id === "forbidden_grasp");
    expect(blind?.evaluate(profileState(p, obs(0.97, 1))).judged).toBe(false);
  });

  it("strips the extras before forwarding and leaves other payloads untouched", () => {
    const p = loadProfile("libero");
    const payload = { states: [1], task_description: "x", provael_extras: { contacts: [] } };
    expect(stripExtras(p, payload)).toEqual({ states: [1], task_description: "x" });
    expect(payload.provael_extras).toBeDefined();
    const plain = { states: [1] };
    expect(stripExtras(p, plain)).toBe(plain);
  });

  it("names tasks suite-qualified and reads the scene from episode_idx", () => {
    const p = loadProfile("libero");
    const task = { name: "put the bowl on the plate", suite: "libero_goal", episode_idx: 3 };
    expect(profileTaskId(p, task)).toBe(GOAL_BOWL);
    expect(profileSeed(p, task)).toBe(3);
    expect(profileSeed(p, { name: "x" })).toBeUndefined();
    expect(profileTaskId(loadProfile("simpler"), { name: "widowx_carrot_on_plate" })).toBe(
      "widowx_carrot_on_plate",
    );
    expect(() => profileTaskId(p, { suite: "libero_goal" })).toThrow(/no string field "name"/);
  });

  it("fits the stock class, the provael subclass and an unnamed benchmark, nothing else", () => {
    const p = loadProfile("libero");
    expect(profileFits(p, "vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark")).toBe(true);
    expect(profileFits(p, "provael_libero:ProvaelLIBEROBenchmark")).toBe(true);
    expect(profileFits(p, undefined)).toBe(true);
    expect(profileFits(p, "vla_eval.benchmarks.simpler.benchmark:SimplerEnvBenchmark")).toBe(false);
  });

  it("the openpi layout for the LIBERO profile forwards vla-eval's upright frames unrotated", () => {
    expect(loadProfile("libero").images.flip).toBe("none");
    const layout = resolveLayout(
      join(PACKAGE_ROOT, "examples", "layouts", "openpi-libero-upright.yaml"),
    );
    expect(layout.images.map((i) => [i.key.join("/"), i.camera, i.rotate180])).toEqual([
      ["observation/image", "agentview", false],
      ["observation/wrist_image", "wrist", false],
    ]);
    expect(layout.state).toEqual(resolveLayout("libero").state);
  });

  it("refuses a bad profile with the field path and a hint", () => {
    const bad = (edit: (r: Record<string, unknown>) => void) => {
      const r = liberoRaw();
      edit(r);
      return r;
    };
    expectInvalid(
      bad((r) => {
        (r.pose as Record<string, unknown>).slice = [3, 1];
      }),
      "pose.slice",
    );
    expectInvalid(
      bad((r) => {
        (r.pose as Record<string, unknown>).slice = [0, 4];
      }),
      "pose.slice",
    );
    expectInvalid(
      bad((r) => {
        (r.pose as Record<string, unknown>).units = "mm";
      }),
      "pose.units",
    );
    expectInvalid(
      bad((r) => {
        ((r.predicates as unknown[])[0] as Record<string, unknown>).box = {
          min: [1, 0, 0],
          max: [0, 1, 1],
        };
      }),
      "predicates.0.box",
    );
    expectInvalid(
      bad((r) => {
        ((r.predicates as unknown[])[0] as Record<string, unknown>).source = "calibrated";
      }),
      "predicates.0.source",
    );
    expectInvalid(
      bad((r) => {
        delete r.extrasKey;
      }),
      "predicates.2.kind",
    );
    expectInvalid(
      bad((r) => {
        r.benchmark = "";
      }),
      "benchmark",
    );
    expectInvalid(
      bad((r) => {
        r.predicates = [];
      }),
      "predicates",
    );
    expectInvalid(
      bad((r) => {
        r.colour = "red";
      }),
      "(root)",
    );
  });

  it("tabletop: a suite-backed profile scores with the suite's own predicates and tasks", () => {
    const p = loadProfile("tabletop");
    const suite = suites.get("tabletop");
    const task = suite.tasks()[0] as TaskSpec;
    expect(taskPredicates(p, task.id).map((q) => q.id)).toEqual(
      suite.predicates(task.id).map((q) => q.id),
    );
    expect(taskSpecFor(p, task.id, "ignored")).toEqual(task);
    expect(() => taskSpecFor(p, "no_such_task", "x")).toThrow(/not a task of suite 'tabletop'/);
    expect(taskProvenance(p, task.id).source).toBe("suite-default");
    const raw = { ...(parseYaml(readFileSync(builtinProfilePath("tabletop"), "utf8")) as object) };
    expect(() => parseProfile({ ...raw, suite: "atlantis" }, "x.yaml")).toThrow(ProvaelError);
  });

  it("a data profile's task spec carries the profile's hazard and object", () => {
    const p = loadProfile("libero");
    const spec = taskSpecFor(p, GOAL_BOWL, "put the bowl on the plate");
    expect(spec).toMatchObject({ id: GOAL_BOWL, instruction: "put the bowl on the plate" });
    expect(spec.hazard.target).toBe("the wine bottle");
    expect(spec.object).toBe("bowl");
    expect(taskProvenance(p, GOAL_BOWL)).toEqual({
      predicate: "keep_out|physical_hazard|forbidden_grasp",
      source: "suite-default",
      digest: null,
    });
    expect(policyCamera(loadProfile("simpler"), "primary")).toBe("agentview");
  });

  it("reads a profile file by path and refuses unknown names and missing files", () => {
    const dir = tempDir("provael-profile-");
    const path = join(dir, "mine.yaml");
    const r = liberoRaw();
    r.id = "mine";
    writeFileSync(path, JSON.stringify(r));
    expect(loadProfile(path).id).toBe("mine");
    expect(() => loadProfile("atlantis")).toThrow(/unknown benchmark profile atlantis/);
    expect(() => loadProfile(join(dir, "absent.yaml"))).toThrow(/does not exist/);
    writeFileSync(join(dir, "broken.yaml"), "id: [");
    expect(() => loadProfile(join(dir, "broken.yaml"))).toThrow(ProvaelError);
  });
});

const LIBERO_PLUS = "vla_eval.benchmarks.libero_plus.benchmark:LIBEROPlusBenchmark";

describe("profile choice and inheritance", () => {
  it("--profile auto: the HELLO's class picks its own profile, a subclass the profile accepting it", () => {
    expect(profileForBenchmark(LIBERO_PLUS).id).toBe("libero_plus");
    expect(profileForBenchmark("vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark").id).toBe(
      "libero",
    );
    for (const sub of [
      "libero_pro.benchmark:LIBEROProBenchmark",
      "libero_mem.benchmark:LIBEROMemBenchmark",
    ])
      expect(profileForBenchmark(`vla_eval.benchmarks.${sub}`).id).toBe("libero");
    expect(
      profileForBenchmark("vla_eval.benchmarks.simpler.benchmark:SimplerEnvBenchmark").id,
    ).toBe("simpler");
  });

  it("--profile libero accepts LIBERO-Plus, -Pro and -Mem; libero_plus accepts LIBERO-Plus only", () => {
    const libero = loadProfile("libero");
    for (const c of [
      LIBERO_PLUS,
      "vla_eval.benchmarks.libero_pro.benchmark:LIBEROProBenchmark",
      "vla_eval.benchmarks.libero_mem.benchmark:LIBEROMemBenchmark",
    ])
      expect(profileFits(libero, c)).toBe(true);
    const plus = loadProfile("libero_plus");
    expect(profileFits(plus, LIBERO_PLUS)).toBe(true);
    // Identity is never inherited: libero_plus does not describe what libero accepts.
    expect(profileFits(plus, "vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark")).toBe(false);
    expect(plus.accepts).toEqual([]);
  });

  it("an unknown class is refused with the closest known classes and how to write a profile", () => {
    let err: ProvaelError | undefined;
    try {
      profileForBenchmark("my_lab.bench:LIBEROPlussBenchmark");
    } catch (e) {
      err = e as ProvaelError;
    }
    expect(err).toBeInstanceOf(ProvaelError);
    expect(err?.code).toBe("config/invalid");
    expect(err?.message).toContain(
      "no built-in profile describes the benchmark 'my_lab.bench:LIBEROPlussBenchmark'",
    );
    expect(err?.message).toContain(`did you mean '${LIBERO_PLUS}'`);
    expect(err?.hint).toMatch(/--profile FILE/);
    expect(() => profileForBenchmark(undefined)).toThrow(/names no benchmark class/);
  });

  it("extends: a profile inherits all but its identity, maps merge, lists replace", () => {
    const plus = loadProfile("libero_plus");
    const libero = loadProfile("libero");
    expect(plus.pose).toEqual(libero.pose);
    expect(plus.images).toEqual(libero.images);
    expect(plus.predicates).toEqual(libero.predicates);
    expect(plus.tasks).toEqual(libero.tasks);
    // task merges key by key: LIBERO's name, qualifier and seed, and the perturbation fields.
    expect(plus.task).toEqual({
      name: "name",
      qualifier: ["suite", "task_id"],
      seed: "episode_idx",
      fields: ["category", "difficulty_level"],
    });
    const dir = tempDir("provael-profile-");
    const path = join(dir, "mine.yaml");
    writeFileSync(
      path,
      [
        "extends: libero_plus",
        "id: mine",
        'benchmark: "my_lab.bench:MyLIBERO"',
        "description: a lab's own LIBERO subclass",
        "observationParams: { send_state: true, send_wrist_image: true }",
      ].join("\n"),
    );
    const mine = loadProfile(path);
    expect(mine.task.fields).toEqual(["category", "difficulty_level"]);
    expect(mine.observationParams).toEqual({ send_state: true, send_wrist_image: true });
    expect(profileFits(mine, "my_lab.bench:MyLIBERO")).toBe(true);
    // A relative parent resolves beside the file; a cycle and an unknown parent are refused.
    writeFileSync(
      join(dir, "child.yaml"),
      "extends: mine.yaml\nid: child\nbenchmark: x:Y\ndescription: d",
    );
    expect(loadProfile(join(dir, "child.yaml")).task.fields).toEqual([
      "category",
      "difficulty_level",
    ]);
    writeFileSync(join(dir, "a.yaml"), "extends: b.yaml\nid: a");
    writeFileSync(join(dir, "b.yaml"), "extends: a.yaml\nid: b");
    expect(() => loadProfile(join(dir, "a.yaml"))).toThrow(/is a cycle/);
    writeFileSync(join(dir, "c.yaml"), "extends: libro\nid: c");
    expect(() => loadProfile(join(dir, "c.yaml"))).toThrow(
      /unknown benchmark profile libro .*did you mean 'libero'/,
    );
  });

  it("LIBERO-Plus keeps its perturbation category and level from the task dict", () => {
    const plus = loadProfile("libero_plus");
    // LIBEROPlusBenchmark.get_tasks (upstream e1ee9ad, libero_plus/benchmark.py) adds both to
    // LIBERO's {name, suite, task_id}; the orchestrator adds episode_idx.
    const task = {
      name: "pick up the black bowl between the plate and the ramekin and place it on the plate",
      suite: "libero_spatial",
      task_id: 412,
      category: "Camera Viewpoints",
      difficulty_level: 2,
      episode_idx: 0,
    };
    expect(profileTaskFields(plus, task)).toEqual({
      category: "Camera Viewpoints",
      difficulty_level: 2,
    });
    // Variants share their instruction: the suite index tells them apart.
    expect(profileTaskId(plus, task)).toBe(`libero_spatial/412/${task.name}`);
    expect(profileTaskId(plus, { ...task, task_id: 413 })).not.toBe(profileTaskId(plus, task));
    // libero_90 has no classification: the fields are absent, nothing is made up.
    expect(profileTaskFields(plus, { name: "x", suite: "libero_90", episode_idx: 0 })).toEqual({});
    expect(profileTaskFields(loadProfile("libero"), task)).toEqual({});
  });

  it("unknown names and keys are refused with a did-you-mean", () => {
    expect(() => loadProfile("liberoplus")).toThrow(/did you mean 'libero_plus'/);
    const r = liberoRaw();
    r.extraKey = "provael_extras";
    const err = expectInvalid(r, "(root)");
    expect(err.message).toMatch(/did you mean 'extrasKey'/);
    const r2 = liberoRaw();
    (r2.pose as Record<string, unknown>).slices = [0, 3];
    expect(expectInvalid(r2, "pose").message).toMatch(/did you mean 'slice'/);
  });
});
