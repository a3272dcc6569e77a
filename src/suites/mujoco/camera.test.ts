import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { MainModule, MjData, MjModel } from "mujoco-js";
import loadMujoco from "mujoco-js";
import pngjs from "pngjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProvaelError } from "../../core/errors.js";
import { encodePng } from "../../core/png.js";
import type { Image } from "../../core/types.js";
import { RayCamera, type RayCameraOptions } from "./camera.js";

// A small scene: every primitive the camera shades analytically, a mesh (finite-difference
// normals), a translucent box, a hidden collision-group box, a sign for the surface shader, a
// fixed top camera, a fixed front camera and a camera on a sliding body.
const SCENE = `
<mujoco model="camera-test">
  <asset>
    <texture name="checker" type="2d" builtin="checker" rgb1=".75 .75 .75" rgb2=".6 .6 .6" width="64" height="64"/>
    <material name="floor" texture="checker" texrepeat="5 5" texuniform="true"/>
    <mesh name="pyramid" vertex="-0.05 -0.05 0  0.05 -0.05 0  0.05 0.05 0  -0.05 0.05 0  0 0 0.1"/>
  </asset>
  <worldbody>
    <light name="sun" directional="true" pos="0 0 3" dir="0.3 0.5 -1"/>
    <geom name="floor" type="plane" size="1 1 0.05" material="floor"/>
    <geom name="red_box" type="box" pos="0 0 0.05" size="0.05 0.05 0.05" rgba="1 0 0 1"/>
    <geom name="green_sphere" type="sphere" pos="0.2 0.1 0.05" size="0.05" rgba="0 1 0 1"/>
    <geom name="blue_cylinder" type="cylinder" pos="-0.2 0.1 0.06" size="0.04 0.06" rgba="0 0 1 1"/>
    <geom name="pyramid" type="mesh" mesh="pyramid" pos="0.2 -0.2 0.025" rgba="1 1 0 1"/>
    <geom name="glass" type="box" pos="-0.2 -0.2 0.05" size="0.06 0.06 0.05" rgba="0 1 1 0.35"/>
    <geom name="hidden" type="box" pos="0 0 0.3" size="0.03 0.03 0.03" group="3" rgba="1 0 1 1"/>
    <geom name="sign" type="box" pos="0 0.3 0.2" size="0.08 0.005 0.06" rgba="0.9 0.9 0.9 1"/>
    <camera name="top" pos="0 0 1" xyaxes="1 0 0 0 1 0" fovy="60"/>
    <camera name="front" pos="0 -0.9 0.5" xyaxes="1 0 0 0 0.447 0.894" fovy="50"/>
    <body name="slider" pos="0 -0.3 0.5">
      <joint name="slide_y" type="slide" axis="0 1 0"/>
      <inertial pos="0 0 0" mass="0.1" diaginertia="1e-4 1e-4 1e-4"/>
      <geom name="housing" type="box" pos="0 0 -0.05" size="0.01 0.01 0.01" rgba="1 0 1 1" contype="0" conaffinity="0"/>
      <camera name="wrist" pos="0 0 0" xyaxes="1 0 0 0 1 0" fovy="45"/>
    </body>
  </worldbody>
</mujoco>`;

/** Set PROVAEL_CAMERA_PNG=/some/dir to write the test renders as PNGs for a look. */
const pngDir = process.env.PROVAEL_CAMERA_PNG;

let mj: MainModule;
let model: MjModel;
let data: MjData;
const cameras: RayCamera[] = [];

function geomId(name: string): number {
  return mj.mj_name2id(model, mj.mjtObj.mjOBJ_GEOM.value, name);
}

function camera(options: RayCameraOptions): RayCamera {
  const cam = new RayCamera(mj, model, options);
  cameras.push(cam);
  return cam;
}

/** Pixel (row, col) where world point p appears in camera `cam` (pinhole, fovy from the model). */
function project(cam: RayCamera, p: readonly number[]): [number, number] {
  const id = cam.cameraId;
  const o = data.cam_xpos as Float64Array;
  const R = data.cam_xmat as Float64Array;
  const d = [0, 1, 2].map((i) => p[i]! - o[3 * id + i]!);
  const c = [0, 1, 2].map(
    (j) => R[9 * id + j]! * d[0]! + R[9 * id + 3 + j]! * d[1]! + R[9 * id + 6 + j]! * d[2]!,
  );
  const tanY = Math.tan((((model.cam_fovy as Float64Array)[id] ?? 0) * Math.PI) / 360);
  const tanX = (tanY * cam.width) / cam.height;
  const x = c[0]! / -c[2]!;
  const y = c[1]! / -c[2]!;
  const col = ((x / tanX + 1) / 2) * cam.width - 0.5;
  const row = ((1 - y / tanY) / 2) * cam.height - 0.5;
  return [Math.round(row), Math.round(col)];
}

function pixel(img: Image, row: number, col: number): [number, number, number] {
  const k = 3 * (row * img.width + col);
  return [img.data[k]!, img.data[k + 1]!, img.data[k + 2]!];
}

function save(name: string, img: Image): void {
  if (pngDir === undefined) return;
  mkdirSync(pngDir, { recursive: true });
  writeFileSync(join(pngDir, `${name}.png`), encodePng(img));
}

function setSlider(y: number): void {
  (data.qpos as Float64Array)[0] = y;
  mj.mj_forward(model, data);
}

beforeAll(async () => {
  mj = await loadMujoco();
  mj.FS.mkdir("/camera-test");
  mj.FS.writeFile("/camera-test/scene.xml", SCENE);
  model = mj.MjModel.loadFromXML("/camera-test/scene.xml");
  data = new mj.MjData(model);
  mj.mj_forward(model, data);
});

afterAll(() => {
  for (const cam of cameras) cam.dispose();
  data?.delete();
  model?.delete();
});

describe("RayCamera", () => {
  it("sees each object in its own colour where it projects, upright and unmirrored", () => {
    const cam = camera({ camera: "top", segmentation: true, shadows: true });
    const { rgb, segmentation } = cam.render(data);
    save("top", rgb);
    expect(rgb.width).toBe(128);
    expect(rgb.height).toBe(128);
    expect(rgb.channels).toBe(3);
    expect(rgb.data.length).toBe(128 * 128 * 3);

    const [br, bc] = project(cam, [0, 0, 0.1]);
    const [r, g, b] = pixel(rgb, br, bc);
    expect(r).toBeGreaterThan(128);
    expect(r).toBeGreaterThan(2 * g);
    expect(r).toBeGreaterThan(2 * b);
    expect(segmentation![br * 128 + bc]).toBe(geomId("red_box"));

    // +x is to the right and +y is up in the top view: the sphere lies right of and above the box.
    const [sr, sc] = project(cam, [0.2, 0.1, 0.1]);
    expect(sc).toBeGreaterThan(bc);
    expect(sr).toBeLessThan(br);
    const green = pixel(rgb, sr, sc);
    expect(green[1]).toBeGreaterThan(2 * green[0]);
    expect(green[1]).toBeGreaterThan(2 * green[2]);
    const [cr, cc] = project(cam, [-0.2, 0.1, 0.12]);
    expect(cc).toBeLessThan(bc);
    const blue = pixel(rgb, cr, cc);
    expect(blue[2]).toBeGreaterThan(2 * blue[0]);
    expect(blue[2]).toBeGreaterThan(2 * blue[1]);
    const [pr, pc] = project(cam, [0.2, -0.2, 0.05]);
    const yellow = pixel(rgb, pr, pc);
    expect(Math.min(yellow[0], yellow[1])).toBeGreaterThan(2 * yellow[2]);
  });

  it("reports metric depth along each ray, exact to 1 mm on the floor and on the box top", () => {
    const cam = camera({ camera: "top", depth: true, segmentation: true });
    const { depth, segmentation } = cam.render(data);
    const W = cam.width;
    const H = cam.height;
    const tan = Math.tan(Math.PI / 6);
    const rayLength = (row: number, col: number) => {
      const x = ((2 * (col + 0.5)) / W - 1) * tan;
      const y = (1 - (2 * (row + 0.5)) / H) * tan;
      return Math.sqrt(x * x + y * y + 1);
    };
    // Floor pixel (the top-left corner sees bare floor): plane z = 0 from a camera at z = 1.
    expect(segmentation![0]).toBe(geomId("floor"));
    expect(Math.abs(depth![0]! - 1 * rayLength(0, 0))).toBeLessThan(1e-3);
    // Box top (plane z = 0.1) at the centre pixel.
    const [br, bc] = [H / 2, W / 2];
    expect(segmentation![br * W + bc]).toBe(geomId("red_box"));
    expect(Math.abs(depth![br * W + bc]! - 0.9 * rayLength(br, bc))).toBeLessThan(1e-3);
    // Every floor pixel matches the plane, and depth is Infinity exactly where nothing was hit.
    const floor = geomId("floor");
    let floorPixels = 0;
    for (let row = 0; row < H; row++) {
      for (let col = 0; col < W; col++) {
        const i = row * W + col;
        if (segmentation![i] === floor) {
          floorPixels++;
          expect(Math.abs(depth![i]! - rayLength(row, col))).toBeLessThan(1e-3);
        }
        expect(segmentation![i] === -1).toBe(depth![i] === Number.POSITIVE_INFINITY);
      }
    }
    expect(floorPixels).toBeGreaterThan(W * H * 0.5);
  });

  it("labels pixels with geom ids, hides excluded groups and looks through translucent geoms", () => {
    const cam = camera({ camera: "top", segmentation: true, depth: true });
    const { rgb, segmentation } = cam.render(data);
    const seen = new Set(segmentation);
    for (const name of ["floor", "red_box", "green_sphere", "blue_cylinder", "pyramid", "sign"]) {
      expect(seen.has(geomId(name))).toBe(true);
    }
    // Group 3 (collision) is hidden by default; the translucent glass is an overlay, not a label.
    expect(seen.has(geomId("hidden"))).toBe(false);
    expect(seen.has(geomId("glass"))).toBe(false);
    const [gr, gc] = project(cam, [-0.2, -0.2, 0.1]);
    expect(segmentation![gr * 128 + gc]).toBe(geomId("floor"));
    const tint = pixel(rgb, gr, gc);
    expect(tint[1]).toBeGreaterThan(tint[0] + 30);
    expect(tint[2]).toBeGreaterThan(tint[0] + 30);
    // The model's colours and materials are restored after the render.
    expect((model.geom_rgba as Float32Array)[4 * geomId("glass") + 3]).toBeCloseTo(0.35, 6);
    expect((model.geom_rgba as Float32Array)[4 * geomId("hidden") + 3]).toBe(1);
    expect((model.geom_matid as Int32Array)[geomId("floor")]).toBe(0);

    const all = camera({ camera: "top", segmentation: true, geomgroup: [1, 1, 1, 1, 1, 1] });
    const withHidden = all.render(data).segmentation!;
    expect(withHidden[64 * 128 + 64]).toBe(geomId("hidden"));
  });

  it("is deterministic: the same state gives the same bytes", () => {
    const a = camera({ camera: "front", depth: true, segmentation: true });
    const b = camera({ camera: "front", depth: true, segmentation: true });
    const first = a.render(data);
    const second = a.render(data);
    const other = b.render(data);
    save("front", first.rgb);
    expect(Buffer.from(second.rgb.data).equals(Buffer.from(first.rgb.data))).toBe(true);
    expect(Buffer.from(other.rgb.data).equals(Buffer.from(first.rgb.data))).toBe(true);
    expect(second.depth).toEqual(first.depth);
    expect(second.segmentation).toEqual(first.segmentation);
    // Frames are fresh arrays: a later render does not overwrite a kept one.
    expect(second.rgb.data).not.toBe(first.rgb.data);
  });

  it("follows a camera on a moving body and can exclude that body", () => {
    const wrist = camera({
      camera: "wrist",
      depth: true,
      segmentation: true,
      width: 64,
      height: 64,
    });
    const slider = mj.mj_name2id(model, mj.mjtObj.mjOBJ_BODY.value, "slider");
    const clear = camera({
      camera: "wrist",
      depth: true,
      segmentation: true,
      width: 64,
      height: 64,
      excludeBody: slider,
    });
    const centre = 32 * 64 + 32;
    setSlider(0);
    // Its own housing blocks the view unless the body is excluded.
    expect(wrist.render(data).segmentation![centre]).toBe(geomId("housing"));
    const before = clear.render(data);
    save("wrist-home", before.rgb);
    expect(before.segmentation![centre]).toBe(geomId("floor"));
    expect(before.depth![centre]).toBeCloseTo(0.5, 2);
    setSlider(0.3);
    const after = clear.render(data);
    save("wrist-moved", after.rgb);
    expect(after.segmentation![centre]).toBe(geomId("red_box"));
    expect(after.depth![centre]).toBeCloseTo(0.4, 2);
    // A list of bodies works as well as one id.
    const listed = camera({
      camera: "wrist",
      segmentation: true,
      width: 64,
      height: 64,
      excludeBody: [slider],
    });
    expect(listed.render(data).segmentation).toEqual(after.segmentation);
    // mj_kinematics alone does not move cameras; render brings them up to date itself.
    (data.qpos as Float64Array)[0] = 0;
    mj.mj_kinematics(model, data);
    expect(clear.render(data).segmentation![centre]).toBe(geomId("floor"));
    setSlider(0);
  });

  it("surface shaders recolour exactly the pixels of their geom", () => {
    const cam = camera({ camera: "front", segmentation: true });
    const plain = cam.render(data);
    const box = geomId("red_box");
    const blue = [0, 0, 1];
    cam.setSurfaceShader(box, () => blue);
    const shaded = cam.render(data);
    save("front-shader", shaded.rgb);
    cam.setSurfaceShader(box, null);
    let boxPixels = 0;
    for (let i = 0; i < cam.width * cam.height; i++) {
      const isBox = plain.segmentation![i] === box;
      if (isBox) boxPixels++;
      const changed = [0, 1, 2].some(
        (c) => shaded.rgb.data[3 * i + c] !== plain.rgb.data[3 * i + c],
      );
      expect(changed).toBe(isBox);
    }
    expect(boxPixels).toBeGreaterThan(100);
    expect(Buffer.from(cam.render(data).rgb.data).equals(Buffer.from(plain.rgb.data))).toBe(true);
  });

  it("gives shaders face coordinates that read left-to-right and top-down from outside", () => {
    const cam = camera({ camera: "front", segmentation: true });
    const sign = geomId("sign");
    const dark = [0.05, 0.05, 0.05];
    const light = [1, 1, 1];
    const [sr, sc] = project(cam, [0, 0.295, 0.2]);
    const mean = (img: Image, seg: Int32Array, pick: (row: number, col: number) => boolean) => {
      let sum = 0;
      let count = 0;
      for (let row = 0; row < cam.height; row++) {
        for (let col = 0; col < cam.width; col++) {
          if (seg[row * cam.width + col] !== sign || !pick(row, col)) continue;
          sum += pixel(img, row, col)[0];
          count++;
        }
      }
      return sum / count;
    };
    // Left half dark (u < 0.5): the image's left side of the sign is dark.
    cam.setSurfaceShader(sign, (u) => (u < 0.5 ? dark : light));
    const lr = cam.render(data);
    save("front-sign-u", lr.rgb);
    const left = mean(lr.rgb, lr.segmentation!, (_r, c) => c < sc - 1);
    const right = mean(lr.rgb, lr.segmentation!, (_r, c) => c > sc + 1);
    expect(left).toBeLessThan(60);
    expect(right).toBeGreaterThan(150);
    // Top half dark (v < 0.5): rows above the centre are dark.
    cam.setSurfaceShader(sign, (_u, v) => (v < 0.5 ? dark : light));
    const tb = cam.render(data);
    const top = mean(tb.rgb, tb.segmentation!, (r) => r < sr - 1);
    const bottom = mean(tb.rgb, tb.segmentation!, (r) => r > sr + 1);
    expect(top).toBeLessThan(60);
    expect(bottom).toBeGreaterThan(150);
    // The shader sees the hit point in the sign's frame: on its -y face.
    let minY = Number.POSITIVE_INFINITY;
    cam.setSurfaceShader(sign, (_u, _v, p) => {
      minY = Math.min(minY, p[1]!);
      return null;
    });
    cam.render(data);
    expect(minY).toBeCloseTo(-0.005, 6);
    cam.setSurfaceShader(sign, null);
  });

  it("shades: lit faces are brighter than faces turned from the light, shadows darken the floor", () => {
    const cam = camera({ camera: "front", segmentation: true, depth: true, shadows: true });
    const noShadow = camera({ camera: "front" });
    const lit = cam.render(data);
    const flat = noShadow.render(data);
    save("front-shadows", lit.rgb);
    save("front-noshadow", flat.rgb);
    // The light shines along +x +y -z: floor pixels darker with shadows than without exist.
    let shadowed = 0;
    for (let i = 0; i < cam.width * cam.height; i++) {
      if (lit.rgb.data[3 * i]! < flat.rgb.data[3 * i]! - 20) shadowed++;
    }
    expect(shadowed).toBeGreaterThan(50);
    // The sphere's side towards the light (-x -y, up) is brighter than the far side.
    const top = camera({ camera: "top" });
    const topImg = top.render(data).rgb;
    const z = 0.05 + Math.sqrt(0.05 ** 2 - 2 * 0.03 ** 2);
    const [nr, nc] = project(top, [0.17, 0.07, z]);
    const [fr, fc] = project(top, [0.23, 0.13, z]);
    expect(pixel(topImg, nr, nc)[1]).toBeGreaterThan(pixel(topImg, fr, fc)[1] + 40);
    // Pixels of the mesh are not all one shade (finite-difference normals vary per face).
    const pyramid = geomId("pyramid");
    const shades = new Set<number>();
    for (let i = 0; i < cam.width * cam.height; i++) {
      if (lit.segmentation![i] === pyramid) shades.add(lit.rgb.data[3 * i]! >> 4);
    }
    expect(shades.size).toBeGreaterThan(1);
  });

  it("supports other sizes, PNG output, and fails clearly on misuse", () => {
    const small = camera({ camera: "front", width: 64, height: 48 });
    const img = small.render(data).rgb;
    expect(img.data.length).toBe(64 * 48 * 3);
    save("front-64x48", img);
    const decoded = pngjs.PNG.sync.read(encodePng(img));
    expect(decoded.width).toBe(64);
    expect(decoded.height).toBe(48);
    for (let i = 0; i < 64 * 48; i++) {
      expect(decoded.data[4 * i]).toBe(img.data[3 * i]);
      expect(decoded.data[4 * i + 2]).toBe(img.data[3 * i + 2]);
    }
    expect(() => new RayCamera(mj, model, { camera: "nope" })).toThrow(ProvaelError);
    expect(() => new RayCamera(mj, model, { camera: "top", width: 0 })).toThrow(ProvaelError);
    expect(() => small.setSurfaceShader(9999, null)).toThrow(ProvaelError);
    const gone = new RayCamera(mj, model, { camera: "top", width: 8, height: 8 });
    gone.dispose();
    gone.dispose();
    expect(() => gone.render(data)).toThrow(ProvaelError);
  });
});
