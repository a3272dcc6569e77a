import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ArmController, checkAction, HOME_JOINTS } from "./controller.js";
import { norm, quatToMat, rotationError, sub } from "./math.js";
import type { Placement } from "./scenes.js";
import { tabletopScenes } from "./tabletop.js";
import { DEFAULT_RENDER, MujocoWorld } from "./world.js";

describe("checkAction", () => {
  it("clips to [-1, 1] and returns a copy", () => {
    const a = checkAction([2, -3, 0.5, 0, 0, 0, 1]);
    expect(Array.from(a)).toEqual([1, -1, 0.5, 0, 0, 0, 1]);
  });

  it.each([
    ["too short", [0, 0, 0]],
    ["too long", [0, 0, 0, 0, 0, 0, 0, 0]],
    ["NaN", [0, 0, Number.NaN, 0, 0, 0, 0]],
    ["Infinity", [0, 0, 0, Number.POSITIVE_INFINITY, 0, 0, 0]],
  ])("throws policy/bad-action when %s", (_why, action) => {
    expect(() => checkAction(action)).toThrow(
      expect.objectContaining({ code: "policy/bad-action" }),
    );
  });
});

describe("ArmController", () => {
  let world: MujocoWorld;
  let scene: Placement = {};

  beforeAll(async () => {
    const source = tabletopScenes();
    scene = await source.placement("kitchen_red_block", 0);
    await source.close();
    world = await MujocoWorld.open({
      file: "tabletop_kitchen.xml",
      objects: ["red_block"],
      graspable: ["red_block"],
      render: { ...DEFAULT_RENDER, enabled: false },
    });
  });
  afterAll(() => world.close());

  it("starts at the documented home pose: 30 cm above the table, pointing down", () => {
    world.placeScene(scene);
    const p = world.controller.eefPos();
    expect(norm(sub(p, [-0.3, 0, 1.1]))).toBeLessThan(0.002);
    const down = quatToMat(world.controller.eefQuat());
    expect(down[8]).toBeLessThan(-0.999); // local z axis points along world -z
    expect(
      world.controller.armJoints().map((q, i) => Math.abs(q - (HOME_JOINTS[i] ?? 0))),
    ).toSatisfy((d: number[]) => d.every((x) => x < 0.01));
  });

  it.each([
    [0, 1],
    [0, -1],
    [1, 1],
    [1, -1],
    [2, 1],
    [2, -1],
  ])("moves the gripper along axis %i, sign %i, as commanded", (axis, sign) => {
    world.placeScene(scene);
    const start = world.controller.eefPos();
    const action = [0, 0, 0, 0, 0, 0, -1];
    action[axis] = sign;
    for (let t = 0; t < 8; t++) world.tick(action);
    const moved = sub(world.controller.eefPos(), start);
    expect((moved[axis] ?? 0) * sign).toBeGreaterThan(0.06);
    for (let k = 0; k < 3; k++) if (k !== axis) expect(Math.abs(moved[k] ?? 0)).toBeLessThan(0.012);
  });

  it("rotates about world z on a yaw action and keeps pointing down", () => {
    world.placeScene(scene);
    const q0 = world.controller.eefQuat();
    for (let t = 0; t < 6; t++) world.tick([0, 0, 0, 0, 0, 1, -1]);
    const r = rotationError(world.controller.eefQuat(), q0);
    expect(r[2]).toBeGreaterThan(0.5);
    expect(Math.hypot(r[0], r[1])).toBeLessThan(0.05);
  });

  it("closes and opens the fingers on the gripper command", () => {
    world.placeScene(scene);
    for (let t = 0; t < 6; t++) world.tick([0, 0, 0, 0, 0, 0, 1]);
    expect(world.controller.fingerPositions().every((f) => f < 0.005)).toBe(true);
    for (let t = 0; t < 6; t++) world.tick([0, 0, 0, 0, 0, 0, -1]);
    expect(world.controller.fingerPositions().every((f) => f > 0.045)).toBe(true);
  });

  it("rejects a bad action before touching the simulation", () => {
    world.placeScene(scene);
    const before = world.engine.stateDigest();
    expect(() => world.tick([0, 0, Number.NaN, 0, 0, 0, 0])).toThrow(
      expect.objectContaining({ code: "policy/bad-action" }),
    );
    expect(() => world.tick([0, 0, 0])).toThrow(
      expect.objectContaining({ code: "policy/bad-action" }),
    );
    expect(world.engine.stateDigest()).toBe(before);
  });

  it("solves a reachable pose by kinematic IK", () => {
    const ctl: ArmController = world.controller;
    const sol = ctl.solvePose([-0.1, 0.15, 0.85], [0, 0, 1, 0]);
    expect(sol.positionError).toBeLessThan(1e-3);
    expect(sol.rotationError).toBeLessThan(1e-2);
  });
});
