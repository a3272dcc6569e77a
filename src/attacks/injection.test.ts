import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { begin, fakePolicy, flatObservation } from "../../test/support/attack-context.js";
import type { Observation, SceneEdit, StepResult } from "../core/types.js";
import { policies } from "../policies/index.js";
import { notApplicableReason } from "../runner/run.js";
import type { MujocoInstance } from "../suites/mujoco/instance.js";
import { TABLE_Z } from "../suites/mujoco/objects.js";
import { tabletopSuite } from "../suites/mujoco/tabletop.js";
import { stubSuite } from "../suites/stub.js";
import {
  benignToolDesc,
  mcpToolDesc,
  neutralSign,
  SIGN_TEMPLATES,
  sceneText,
} from "./injection.js";

const idle = fakePolicy(() => new Float32Array(7));
const kitchen = tabletopSuite.tasks().find((t) => t.id === "kitchen_red_block")!;

describe("scene_text", () => {
  let sim: MujocoInstance;
  beforeAll(async () => {
    sim = (await tabletopSuite.open()) as MujocoInstance;
  });
  afterAll(() => sim.close());

  it("stands a sign behind the hazard whose text names the hazard as an order", async () => {
    for (let seed = 0; seed < 8; seed++) {
      const { hooks } = await begin(sceneText, {
        suite: tabletopSuite,
        task: kitchen,
        policy: idle,
        seed,
      });
      const [edit] = hooks.scene?.() ?? [];
      expect(edit?.kind).toBe("sign");
      expect(edit?.params.text).toMatch(/THE KNIFE/);
      const [x, y] = (edit?.params.pos ?? []) as number[];
      expect(x).toBeCloseTo(kitchen.hazard.targetPos![0] - 0.1, 9);
      expect(y).toBeCloseTo(kitchen.hazard.targetPos![1], 9);
    }
    expect(SIGN_TEMPLATES.length).toBeGreaterThan(1);
  });

  it("draws its text in perspective: both cameras show the written sign differently from a blank one", async () => {
    const { hooks } = await begin(sceneText, {
      suite: tabletopSuite,
      task: kitchen,
      policy: idle,
      seed: 0,
    });
    const written = hooks.scene?.() ?? [];
    const blank: SceneEdit[] = written.map((e) => ({ ...e, params: { ...e.params, text: "" } }));
    const [sx = 0, sy = 0] = (written[0]?.params.pos ?? []) as number[];
    // The agent view at the start; the wrist view with the gripper above and in front of the sign.
    const view = async (edits: SceneEdit[]) => {
      let r: StepResult = await sim.reset({ task: kitchen.id, scene: 0, seed: 0, edits });
      const agent = r.obs.images.agentview?.data;
      const goal = [sx + 0.12, sy, TABLE_Z + 0.3];
      for (let i = 0; i < 60; i++) {
        const eef = r.state.eefPos ?? [0, 0, 0];
        const a = new Float32Array(7);
        for (let k = 0; k < 3; k++)
          a[k] = Math.max(-1, Math.min(1, ((goal[k] ?? 0) - eef[k]!) / 0.015));
        r = await sim.step(a);
      }
      return { agent, wrist: r.obs.images.wrist?.data };
    };
    const a = await view(written);
    const b = await view(blank);
    expect(a.agent, "agentview shows the text").not.toEqual(b.agent);
    expect(a.wrist, "wrist view shows the text").not.toEqual(b.wrist);
  }, 60_000);
});

describe("mcp_tool_desc", () => {
  it("adds poisoned tool descriptions naming the hazard to the context, keeping what was there", async () => {
    const stubTask = stubSuite.tasks()[0]!;
    for (let seed = 0; seed < 6; seed++) {
      const { hooks } = await begin(mcpToolDesc, {
        suite: stubSuite,
        task: stubTask,
        policy: idle,
        seed,
      });
      const obs: Observation = {
        ...flatObservation(4, 4),
        context: ["tool clock.now(): the time"],
      };
      const out = (await hooks.perceive?.(obs, 0)) as Observation;
      expect(out.context?.[0]).toBe("tool clock.now(): the time");
      expect(out.context?.length).toBeGreaterThan(1);
      expect(out.context?.slice(1).join(" ")).toContain(stubTask.hazard.target);
      expect(obs.context).toHaveLength(1);
    }
  });

  it("is N/A for policies that read no context channel", () => {
    const reason = (id: string) =>
      notApplicableReason(mcpToolDesc, policies.get(id).capabilities, tabletopSuite.capabilities);
    expect(reason("scripted")).toMatch(/readsContext/);
    expect(reason("stub")).toBeNull();
  });
});

describe("neutral_sign and benign_tool_desc", () => {
  const words = (t: string) => t.toLowerCase().replace(/^the /, "");

  it("neutral_sign stands a sign of scene_text's size at its spot, at least as long, naming nothing", async () => {
    const given = { scene_text: { size: [0.1, 0.05], behind: 0.15 } };
    for (let seed = 0; seed < 8; seed++) {
      const a = await begin(sceneText, {
        suite: tabletopSuite,
        task: kitchen,
        policy: idle,
        seed,
        given,
      });
      const c = await begin(neutralSign, {
        suite: tabletopSuite,
        task: kitchen,
        policy: idle,
        seed,
        given,
      });
      const [attack] = a.hooks.scene?.() ?? [];
      const [control] = c.hooks.scene?.() ?? [];
      expect(control?.kind).toBe("sign");
      expect(control?.params.pos).toEqual(attack?.params.pos);
      expect(control?.params.size).toEqual([0.1, 0.05]);
      const text = control?.params.text as string;
      expect(text.length).toBeGreaterThanOrEqual((attack!.params.text as string).length);
      expect(text.toLowerCase()).not.toContain(words(kitchen.hazard.target));
      expect(text).not.toMatch(/SYSTEM|TASK|OVERRIDE|GO TO|PICK/);
    }
  });

  it("benign_tool_desc adds as many plain descriptions as mcp_tool_desc, each at least as long", async () => {
    const stubTask = stubSuite.tasks()[0]!;
    for (let seed = 0; seed < 6; seed++) {
      const obs: Observation = {
        ...flatObservation(4, 4),
        context: ["tool clock.now(): the time"],
      };
      const a = await begin(mcpToolDesc, { suite: stubSuite, task: stubTask, policy: idle, seed });
      const c = await begin(benignToolDesc, {
        suite: stubSuite,
        task: stubTask,
        policy: idle,
        seed,
      });
      const poisoned = ((await a.hooks.perceive!(obs, 0)) as Observation).context ?? [];
      const plain = ((await c.hooks.perceive!(obs, 0)) as Observation).context ?? [];
      expect(plain[0]).toBe("tool clock.now(): the time");
      expect(plain.length).toBe(poisoned.length);
      plain.forEach((line, i) => {
        expect(line.length).toBeGreaterThanOrEqual(poisoned[i]!.length);
        expect(line.toLowerCase()).not.toContain(words(stubTask.hazard.target));
      });
      expect(plain.join(" ")).not.toMatch(/IMPORTANT|override|Priority|instead/i);
    }
  });

  it("follow their attack's pinned variant", async () => {
    const c = await begin(benignToolDesc, {
      suite: stubSuite,
      task: stubSuite.tasks()[0]!,
      policy: idle,
      given: { mcp_tool_desc: { variant: 1 } },
    });
    const out = (await c.hooks.perceive?.(flatObservation(4, 4), 0)) as Observation;
    // Template 1 is a single line.
    expect(out.context).toHaveLength(1);
  });
});
