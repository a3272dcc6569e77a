/**
 * A ray-cast camera for MuJoCo scenes: renders a named MJCF `<camera>` to RGB (and optionally
 * depth and geom segmentation) with one batched `mj_multiRay` per pass, no OpenGL needed.
 *
 * What it draws, and the choices behind it:
 * - **Colour** per geom: the geom's `rgba`, or its material's `rgba` when the geom has a material
 *   and its own rgba is MuJoCo's default (0.5 0.5 0.5 1), the rule `mjv_updateScene` applies.
 *   Planes with a 2-D material texture are textured (nearest texel).
 * - **Shading**: ambient + Lambert from the model's first active light (a spot light is treated as
 *   a point light, its cone ignored; with no light, a fixed light from above) + a weak headlight,
 *   so faces stay distinguishable. Normals are analytic for planes, spheres, capsules, ellipsoids,
 *   cylinders and boxes, and come from finite differences of neighbouring hit points otherwise
 *   (meshes, height fields).
 * - **Shadows** (opt-in, `shadows: true`; skipped for a light with `castshadow="false"`): hard
 *   shadows from one extra `mj_multiRay` cast *from* the light to every lit hit point (a
 *   directional light is placed 1 km away along its direction), so it stays one batched call;
 *   it costs about 50-70% more time per frame.
 * - **Translucency**: a geom with 0 < alpha < 1 is an overlay. Its pixels are re-cast with all
 *   translucent geoms hidden (one batched call over those pixels only) and the overlay colour is
 *   blended over what lies behind. Depth and segmentation report that opaque surface behind (or
 *   none), so a translucent keep-out zone never hides an object from the masks. One overlay layer
 *   is drawn; stacked translucent geoms show the nearest. Translucent geoms cast no shadows.
 * - **Hidden geoms**: alpha 0 is invisible, as in MuJoCo; so are geoms of groups switched off in
 *   `geomgroup` and geoms of excluded bodies. Hiding a geom from `mj_multiRay` is done by setting
 *   its alpha to 0 (and material to none) in the model for the duration of `render`, restored in
 *   a `finally`: the binding ignores `geomgroup`, `bodyexclude` takes a single body, and there is
 *   no other way to make it skip a given geom. Nothing else can use the model meanwhile, as
 *   `render` is synchronous.
 * - **Background**: a sky-to-grey gradient by the ray's world elevation.
 *
 * Pixel (row 0, column 0) is the top-left of what the camera sees; the image is not mirrored.
 * Rendering is deterministic: the same model and state give the same bytes.
 */
import type { DoubleBuffer, IntBuffer, MainModule, MjData, MjModel } from "mujoco-js";
import { ProvaelError } from "../../core/errors.js";
import type { Image } from "../../core/types.js";
import { BOX, NearRays } from "./near-rays.js";
import {
  rayVisible,
  StaticHits,
  splitStaticGeoms,
  staticState,
  staticStateLength,
  staticWins,
} from "./static-rays.js";

// mjtGeom values (fixed by MuJoCo's ABI); plain numbers keep the per-pixel switch cheap.
const GEOM_PLANE = 0;
const GEOM_SPHERE = 2;
const GEOM_CAPSULE = 3;
const GEOM_ELLIPSOID = 4;
const GEOM_CYLINDER = 5;
const GEOM_BOX = 6;
// mjtLightType: directional and image lights have no position to cast shadows from.
const LIGHT_DIRECTIONAL = 1;
const LIGHT_IMAGE = 3;
// mjtTextureRole RGB and mjtTexture 2D: the only texture kind drawn (on planes).
const TEXROLE_RGB = 1;
const TEXTURE_2D = 0;

/** Shading weights; their sum may exceed 1 and is clamped per channel. */
const AMBIENT = 0.3;
const DIFFUSE = 0.65;
const HEADLIGHT = 0.2;
/** Light direction (towards the light) when the model has no active light: above, a bit to -y. */
const DEFAULT_LIGHT: readonly [number, number, number] = [0.25, -0.35, 0.9];
/** Distance at which a directional light is placed to cast (near-parallel) shadow rays. */
const DIRECTIONAL_LIGHT_DISTANCE = 1000;
/** A shadow ray must stop this much (metres) short of the point to count as occluded. */
const SHADOW_EPSILON = 1e-3;
/**
 * Metres added to a moving geom's bounding box before a ray is judged unable to reach it: orders
 * of magnitude above the rounding error of MuJoCo's ray code, so no hit is ever skipped.
 */
const BOX_MARGIN = 1e-3;
/** n·l below which a lit point's own geom is not trusted to leave its shadow ray alone. */
const GRAZING = 1e-3;
/** Metres above a plane within which a lit point keeps its shadow ray (rounding is far below). */
const PLANE_MARGIN = 1e-2;
/** Ray cutoff in metres: anything farther reads as background. */
const FAR = 1e4;
/**
 * Passed as mj_multiRay's geomgroup. The mujoco-js 0.0.7 binding ignores that argument (measured:
 * all-zero flags still hit), so hidden groups are hidden like translucent geoms instead; all-ones
 * keeps the result the same should a later binding honour it.
 */
const ALL_GROUPS = new Uint8Array([1, 1, 1, 1, 1, 1]);
/** MuJoCo's default geom rgba, which defers to the material's rgba. */
const DEFAULT_RGBA = [0.5, 0.5, 0.5, 1] as const;

/**
 * Colours a geom's surface point; see {@link RayCamera.setSurfaceShader}.
 *
 * @param u - across the face, 0 at the left edge and 1 at the right, as seen from outside.
 * @param v - down the face, 0 at the top edge and 1 at the bottom (image-row order).
 * @param localPoint - the hit point in the geom's frame (metres); valid only during the call.
 * @returns an albedo `[r, g, b]` in [0, 1] (lighting is applied on top), or `null` to keep the
 *   geom's own colour. Returning the same array every call is fine.
 */
export type SurfaceShader = (
  u: number,
  v: number,
  localPoint: Float64Array,
) => ArrayLike<number> | null;

/** Options of {@link RayCamera}. */
export interface RayCameraOptions {
  /** Name of the MJCF `<camera>` to render. */
  camera: string;
  /** Image width in pixels (default 128). */
  width?: number;
  /** Image height in pixels (default 128). */
  height?: number;
  /** Also return metric depth along each ray (default false). */
  depth?: boolean;
  /** Also return the geom id seen in each pixel (default false). */
  segmentation?: boolean;
  /**
   * Which geom groups 0..5 are visible (truthy = visible). Default `[1, 1, 1, 0, 0, 0]`, MuJoCo's
   * viewer default, which hides collision-only geoms conventionally put in groups 3-5.
   */
  geomgroup?: ArrayLike<number | boolean>;
  /**
   * Body id, or ids, whose geoms are invisible to this camera (a wrist camera's own gripper and
   * fingers, say); default none. Excluded bodies cast no shadows either.
   */
  excludeBody?: number | readonly number[];
  /** Cast hard shadows from the light (default false: one more ray pass, 50-70% more time). */
  shadows?: boolean;
  /**
   * Skip work whose result is known (default true): keep the hits on geoms welded to the world
   * between frames while the camera stays put and cast only the moving geoms (static-rays.ts),
   * and cast no shadow ray that no geom can block. The images are the same bytes either way;
   * false casts every ray in full, for checking exactly that.
   */
  shortcuts?: boolean;
}

/** One rendered frame. Every array is freshly allocated, so frames can be kept. */
export interface RayCameraFrame {
  /** HWC RGB, row 0 at the top. */
  rgb: Image;
  /** Metres along each pixel's ray to the first opaque surface; `Infinity` where none. */
  depth?: Float32Array;
  /** Geom id of the first opaque surface per pixel; -1 where none. */
  segmentation?: Int32Array;
}

/** Model and data arrays as views into WASM memory; refetched after any allocation may grow it. */
interface FrameViews {
  type: Int32Array;
  size: Float64Array;
  aabb: Float64Array;
  xpos: Float64Array;
  xmat: Float64Array;
  matid: Int32Array;
  texData: Uint8Array;
  texAdr: Int32Array;
  texWidth: Int32Array;
  texHeight: Int32Array;
  texChannels: Int32Array;
  texRepeat: Float32Array;
  texUniform: Uint8Array;
}

/**
 * Renders one MJCF camera by ray casting. Create once per (model, camera, size), call
 * {@link RayCamera.render} after the body poses are up to date (`mj_forward`, `mj_step` or
 * `mj_kinematics`), and {@link RayCamera.dispose} when done. Fixed cameras and cameras on moving
 * bodies (a wrist camera) both work: `render` runs `mj_camlight` (cheap; `mj_kinematics` alone
 * leaves cameras and lights where they were) and reads `data.cam_xpos`/`cam_xmat`.
 *
 * @example
 *   const mujoco = await loadMujoco();
 *   const model = mujoco.MjModel.loadFromXML("/work/scene.xml");
 *   const data = new mujoco.MjData(model);
 *   mujoco.mj_forward(model, data);
 *   const cam = new RayCamera(mujoco, model, { camera: "agentview", width: 64, height: 64, depth: true });
 *   const { rgb, depth } = cam.render(data); // rgb.data: 64*64*3 bytes, depth: 64*64 metres
 *   cam.dispose();
 */
export class RayCamera {
  readonly width: number;
  readonly height: number;
  readonly cameraId: number;
  readonly cameraName: string;

  private readonly mujoco: MainModule;
  private readonly model: MjModel;
  private readonly n: number;
  private readonly wantDepth: boolean;
  private readonly wantSegmentation: boolean;
  private readonly shadows: boolean;
  private readonly shortcuts: boolean;
  /** Per body: 1 when its geoms are excluded from this camera. */
  private readonly bodyExcluded: Uint8Array;
  private readonly group = new Uint8Array(6);
  private readonly origin = new Float64Array(3);
  private readonly shadowOrigin = new Float64Array(3);
  /** Light of this frame: unit direction towards it (directional) or its position (point). */
  private readonly light = new Float64Array(3);
  private lightIsPoint = false;
  private lightCastsShadow = true;

  /** Unit ray directions in the camera frame (x right, y up, looking along -z), per pixel. */
  private readonly camDirs: Float64Array;
  private readonly dirs: Float64Array;
  /** A compacted ray list (translucent or shadow pass): directions, pixels, results. */
  private readonly auxDirs: Float64Array;
  private readonly auxPixel: Int32Array;
  private readonly auxExpect: Float64Array;
  private readonly auxGeom: Int32Array;
  private readonly auxDist: Float64Array;

  /** First hit per pixel, translucent or not. */
  private readonly hitGeom: Int32Array;
  private readonly hitDist: Float64Array;
  /**
   * First opaque hit per pixel (looking through translucent overlays): geom, distance, world
   * point, world normal (facing the camera), point in the geom's frame, max(0, n·l), and 1 where
   * the light reaches it.
   */
  private readonly surfGeom: Int32Array;
  private readonly surfDist: Float64Array;
  private readonly pos: Float64Array;
  private readonly nrm: Float64Array;
  private readonly loc: Float64Array;
  private readonly ndotl: Float64Array;
  private readonly lit: Uint8Array;
  private readonly needsFiniteDiff: Uint8Array;
  /**
   * Per pixel: 1 when the ray met its geom's surface from inside (the outward normal pointed
   * along the ray, so it was flipped): the camera sits inside that geom, and the lit point is on
   * the inner side of its surface, where the geom itself can shade it.
   */
  private readonly inside: Uint8Array;

  /** Per-geom effective rgba, plane texture id (-1: none) and translucency, refreshed per frame. */
  private geomColour = new Float64Array(0);
  private planeTex = new Int32Array(0);
  private isTranslucent = new Uint8Array(0);
  private readonly translucent: number[] = [];
  /** Geoms of hidden groups and excluded bodies, made invisible for the whole frame. */
  private readonly hiddenGeoms: number[] = [];
  private readonly shaders: (SurfaceShader | undefined)[] = [];
  private shaderCount = 0;

  // Scratch vectors, reused for every pixel.
  private readonly local = new Float64Array(3);
  private readonly normal = new Float64Array(3);
  private readonly albedo = new Float64Array(3);
  private readonly uv = new Float64Array(2);

  private gidBuf: IntBuffer | null;
  private distBuf: DoubleBuffer | null;

  /** Geoms welded to the world and the others, with the bodies of the former. */
  private readonly fixedGeoms: number[];
  private readonly movingGeoms: number[];
  private readonly fixedBodies: number[];
  /** Static hits per pass; null when the cache is off. */
  private readonly staticHits: {
    primary: StaticHits;
    overlay: StaticHits;
    shadow: StaticHits;
  } | null;
  /** The camera pose of the last frame (NaN before the first): the cache serves a still camera. */
  private readonly lastPose = new Float64Array(12).fill(Number.NaN);
  private still = false;
  /** Rays of a pass whose static hit is not stored: index in the pass, direction, result. */
  private readonly missIndex: Int32Array;
  private readonly missDirs: Float64Array;
  private readonly missGeom: Int32Array;
  private readonly missDist: Float64Array;
  /** Rays of a pass that pass near a moving geom: index in the pass, direction, result. */
  private readonly nearIndex: Int32Array;
  private readonly nearDirs: Float64Array;
  private readonly nearGeom: Int32Array;
  private readonly nearDist: Float64Array;
  /** Bounding boxes (near-rays.ts) of the visible moving geoms of this frame. */
  private movingBoxes = new Float64Array(0);
  private movingBoxCount = 0;
  /** Bounding boxes and ids of every visible geom, for culling shadow rays. */
  private blockerBoxes = new Float64Array(0);
  private blockerIds = new Int32Array(0);
  private readonly nearRays: NearRays;
  private readonly nearFlag: Uint8Array;

  constructor(mujoco: MainModule, model: MjModel, options: RayCameraOptions) {
    const width = options.width ?? 128;
    const height = options.height ?? 128;
    if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
      throw new ProvaelError("suite/error", `camera size ${width}x${height} is not valid`, {
        details: { camera: options.camera, width, height },
        hint: "width and height must be positive integers",
      });
    }
    const id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA.value, options.camera);
    if (id < 0) {
      throw new ProvaelError("suite/error", `the model has no camera named '${options.camera}'`, {
        details: { camera: options.camera, ncam: model.ncam },
        hint: "add a <camera name=...> to the MJCF or pick one of its cameras",
      });
    }
    this.mujoco = mujoco;
    this.model = model;
    this.cameraId = id;
    this.cameraName = options.camera;
    this.width = width;
    this.height = height;
    const n = width * height;
    this.n = n;
    this.wantDepth = options.depth ?? false;
    this.wantSegmentation = options.segmentation ?? false;
    this.shadows = options.shadows ?? false;
    this.shortcuts = options.shortcuts ?? true;
    this.bodyExcluded = new Uint8Array(model.nbody);
    const excluded = options.excludeBody ?? [];
    for (const b of typeof excluded === "number" ? [excluded] : excluded) {
      if (!Number.isInteger(b) || b >= model.nbody) {
        throw new ProvaelError("suite/error", `excluded body id ${b} is out of range`, {
          details: { camera: options.camera, body: b, nbody: model.nbody },
          hint: "look the id up with mj_name2id(model, mjOBJ_BODY, name); -1 means none",
        });
      }
      if (b >= 0) this.bodyExcluded[b] = 1;
    }
    const groups = options.geomgroup ?? [1, 1, 1, 0, 0, 0];
    for (let g = 0; g < 6; g++) this.group[g] = groups[g] ? 1 : 0;

    this.camDirs = new Float64Array(3 * n);
    this.dirs = new Float64Array(3 * n);
    this.auxDirs = new Float64Array(3 * n);
    this.auxPixel = new Int32Array(n);
    this.auxExpect = new Float64Array(n);
    this.auxGeom = new Int32Array(n);
    this.auxDist = new Float64Array(n);
    this.hitGeom = new Int32Array(n);
    this.hitDist = new Float64Array(n);
    this.surfGeom = new Int32Array(n);
    this.surfDist = new Float64Array(n);
    this.pos = new Float64Array(3 * n);
    this.nrm = new Float64Array(3 * n);
    this.loc = new Float64Array(3 * n);
    this.ndotl = new Float64Array(n);
    this.lit = new Uint8Array(n);
    this.needsFiniteDiff = new Uint8Array(n);
    this.inside = new Uint8Array(n);
    this.initCameraRays();
    this.gidBuf = new mujoco.IntBuffer(n);
    this.distBuf = new mujoco.DoubleBuffer(n);

    const { fixed, moving } = splitStaticGeoms(model);
    this.fixedGeoms = fixed;
    this.movingGeoms = moving;
    const bodyOf = model.geom_bodyid as Int32Array;
    this.fixedBodies = [...new Set(fixed.map((g) => bodyOf[g]!))].sort((a, b) => a - b);
    const stateLength = staticStateLength(fixed.length, this.fixedBodies.length);
    // Nothing to keep when no geom is static, or nothing to save when every geom is.
    this.staticHits =
      (options.shortcuts ?? true) && fixed.length > 0 && moving.length > 0
        ? {
            primary: new StaticHits(n, stateLength),
            overlay: new StaticHits(n, stateLength),
            shadow: new StaticHits(n, stateLength),
          }
        : null;
    this.missIndex = new Int32Array(n);
    this.missDirs = new Float64Array(3 * n);
    this.missGeom = new Int32Array(n);
    this.missDist = new Float64Array(n);
    this.nearIndex = new Int32Array(n);
    this.nearDirs = new Float64Array(3 * n);
    this.nearGeom = new Int32Array(n);
    this.nearDist = new Float64Array(n);
    this.nearRays = new NearRays(n);
    this.nearFlag = new Uint8Array(n);
  }

  /**
   * Overrides the colour of `geomId`'s surface with a function of where it was hit, or removes
   * the override with `null`. Lighting and shadows still apply on top. `u, v` in [0, 1] span the
   * face that was hit, oriented so that an image sampled at `(u * w, v * h)` reads correctly (not
   * mirrored) from outside, in any camera:
   * - box: each face; upright with the box's local +z up (local +y up on the ±z faces), so on the
   *   +x face u runs along +y, on the -x face along -y;
   * - plane: local x to the right, local +y up, over the plane's size;
   * - sphere, ellipsoid, cylinder, capsule: u = longitude around local z, v = from top to bottom;
   * - mesh and others: the faces of the geom's bounding box, as for a box.
   *
   * @example
   *   // a sign: a thin box (size 0.005 0.15 0.1) whose ±x faces show a w×h bitmap of text
   *   const ink = [0.05, 0.05, 0.05];
   *   cam.setSurfaceShader(signId, (u, v) => (bitmap[((v * h) | 0) * w + ((u * w) | 0)] ? ink : null));
   */
  setSurfaceShader(geomId: number, shader: SurfaceShader | null): void {
    if (!Number.isInteger(geomId) || geomId < 0 || geomId >= this.model.ngeom) {
      throw new ProvaelError("suite/error", `geom id ${geomId} is out of range`, {
        details: { geomId, ngeom: this.model.ngeom },
        hint: "look the id up with mj_name2id(model, mjOBJ_GEOM, name)",
      });
    }
    const had = this.shaders[geomId] !== undefined;
    this.shaders[geomId] = shader ?? undefined;
    this.shaderCount += (shader ? 1 : 0) - (had ? 1 : 0);
  }

  /**
   * Renders the camera in `data`'s current state (body poses must be up to date). Updates
   * `data`'s camera and light poses from the body poses (`mj_camlight`), nothing else.
   *
   * @example
   *   mujoco.mj_step(model, data);
   *   const frame = cam.render(data);
   *   observation.images.agentview = frame.rgb;
   */
  render(data: MjData): RayCameraFrame {
    if (this.gidBuf === null || this.distBuf === null) {
      throw new ProvaelError("suite/error", `camera '${this.cameraName}' was disposed`, {
        hint: "create a new RayCamera after dispose()",
      });
    }
    const n = this.n;
    this.mujoco.mj_camlight(this.model, data);
    this.refreshGeoms();
    this.updateWorldRays(data);
    this.updateLight(data);
    this.still = this.staticHits !== null && this.samePose(data);

    const savedHidden = this.hide(this.hiddenGeoms);
    try {
      this.castSplit(
        data,
        this.staticHits?.primary,
        this.origin,
        this.dirs,
        n,
        null,
        this.hitGeom,
        this.hitDist,
      );
      this.surfGeom.set(this.hitGeom);
      this.surfDist.set(this.hitDist);
      const savedOverlays = this.hide(this.translucent);
      try {
        if (this.translucent.length > 0) this.castBehindOverlays(data);
        // Views are taken after each cast: a cast allocates, which may grow and detach memory.
        this.computeSurfaces(this.frameViews(data));
        this.computeShadows(data);
      } finally {
        this.restore(this.translucent, savedOverlays);
      }
    } finally {
      this.restore(this.hiddenGeoms, savedHidden);
    }

    const rgb = new Uint8Array(3 * n);
    this.shade(this.frameViews(data), rgb);

    const frame: RayCameraFrame = {
      rgb: { width: this.width, height: this.height, channels: 3, data: rgb },
    };
    if (this.wantDepth) {
      const depth = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        depth[i] = this.surfGeom[i]! >= 0 ? this.surfDist[i]! : Number.POSITIVE_INFINITY;
      }
      frame.depth = depth;
    }
    if (this.wantSegmentation) frame.segmentation = this.surfGeom.slice();
    return frame;
  }

  /** Frees the WASM-side ray buffers; the camera cannot render afterwards. Safe to call twice. */
  dispose(): void {
    this.gidBuf?.delete();
    this.distBuf?.delete();
    this.gidBuf = null;
    this.distBuf = null;
  }

  // -------------------------------------------------------------------------------------------
  // Rays

  private initCameraRays(): void {
    const m = this.model;
    const id = this.cameraId;
    const W = this.width;
    const H = this.height;
    // fovy is the vertical field of view in degrees; a sensor size (intrinsics) overrides it.
    let tanY = Math.tan(((m.cam_fovy as Float64Array)[id]! * Math.PI) / 360);
    let tanX = (tanY * W) / H;
    const sensor = m.cam_sensorsize as Float32Array;
    const intrinsic = m.cam_intrinsic as Float32Array;
    if (sensor.length >= 2 * (id + 1) && sensor[2 * id]! > 0 && sensor[2 * id + 1]! > 0) {
      tanX = sensor[2 * id]! / (2 * intrinsic[4 * id]!);
      tanY = sensor[2 * id + 1]! / (2 * intrinsic[4 * id + 1]!);
    }
    const d = this.camDirs;
    for (let r = 0; r < H; r++) {
      // Row 0 looks up (+y) and column 0 looks left (-x): the image is upright and unmirrored.
      const y = (1 - (2 * (r + 0.5)) / H) * tanY;
      for (let c = 0; c < W; c++) {
        const x = ((2 * (c + 0.5)) / W - 1) * tanX;
        const inv = 1 / Math.sqrt(x * x + y * y + 1);
        const k = 3 * (r * W + c);
        d[k] = x * inv;
        d[k + 1] = y * inv;
        d[k + 2] = -inv;
      }
    }
  }

  private updateWorldRays(data: MjData): void {
    const id = this.cameraId;
    const p = data.cam_xpos as Float64Array;
    const R = data.cam_xmat as Float64Array;
    this.origin[0] = p[3 * id]!;
    this.origin[1] = p[3 * id + 1]!;
    this.origin[2] = p[3 * id + 2]!;
    // cam_xmat is row-major; its columns are the camera's x, y, z axes in the world.
    const o = 9 * id;
    const r00 = R[o]!;
    const r01 = R[o + 1]!;
    const r02 = R[o + 2]!;
    const r10 = R[o + 3]!;
    const r11 = R[o + 4]!;
    const r12 = R[o + 5]!;
    const r20 = R[o + 6]!;
    const r21 = R[o + 7]!;
    const r22 = R[o + 8]!;
    const src = this.camDirs;
    const dst = this.dirs;
    for (let k = 0; k < dst.length; k += 3) {
      const x = src[k]!;
      const y = src[k + 1]!;
      const z = src[k + 2]!;
      dst[k] = r00 * x + r01 * y + r02 * z;
      dst[k + 1] = r10 * x + r11 * y + r12 * z;
      dst[k + 2] = r20 * x + r21 * y + r22 * z;
    }
  }

  /** Whether the camera sits where it sat for the last frame (and remembers this frame's pose). */
  private samePose(data: MjData): boolean {
    const id = this.cameraId;
    const p = data.cam_xpos as Float64Array;
    const R = data.cam_xmat as Float64Array;
    let same = true;
    for (let c = 0; c < 12; c++) {
      const v = c < 3 ? p[3 * id + c]! : R[9 * id + c - 3]!;
      if (!Object.is(v, this.lastPose[c])) same = false;
      this.lastPose[c] = v;
    }
    return same;
  }

  /**
   * {@link RayCamera.cast}, with the static geoms' hits kept between frames of a still camera
   * (static-rays.ts): the static geoms are cast only for rays whose hit is not stored, the
   * moving ones only for rays that pass within their bounding spheres (no other ray can hit
   * them), and the two merged by MuJoCo's nearest-hit rule. `pixel` maps the pass's rays to
   * pixels (null: ray k is pixel k).
   */
  private castSplit(
    data: MjData,
    hits: StaticHits | undefined,
    origin: Float64Array,
    vec: Float64Array,
    count: number,
    pixel: Int32Array | null,
    outGeom: Int32Array,
    outDist: Float64Array,
  ): void {
    if (!hits || !this.still || count === 0) {
      this.cast(data, origin, vec, count, outGeom, outDist);
      return;
    }
    hits.begin(
      (out) => staticState(this.model, data, this.fixedGeoms, this.fixedBodies, out),
      origin,
    );
    let misses = 0;
    for (let k = 0; k < count; k++) {
      if (hits.holds(pixel ? pixel[k]! : k, vec, k)) continue;
      this.missIndex[misses] = k;
      copy3(this.missDirs, misses, vec, k);
      misses++;
    }
    if (misses > 0) {
      const savedMoving = this.hide(this.movingGeoms);
      try {
        this.cast(data, origin, this.missDirs, misses, this.missGeom, this.missDist);
      } finally {
        this.restore(this.movingGeoms, savedMoving);
      }
      for (let j = 0; j < misses; j++) {
        const k = this.missIndex[j]!;
        hits.store(pixel ? pixel[k]! : k, vec, k, this.missGeom[j]!, this.missDist[j]!);
      }
    }
    const flag = this.nearFlag;
    if (this.boundMovingGeoms(data)) {
      this.nearRays.mark(origin, vec, count, this.movingBoxes, this.movingBoxCount, flag);
    } else flag.fill(1, 0, count);
    let near = 0;
    for (let k = 0; k < count; k++) {
      // What mj_multiRay reports for a ray that hits nothing.
      outGeom[k] = -1;
      outDist[k] = -1;
      if (flag[k] === 0) continue;
      this.nearIndex[near] = k;
      copy3(this.nearDirs, near, vec, k);
      near++;
    }
    if (near > 0) {
      const savedFixed = this.hide(this.fixedGeoms);
      try {
        this.cast(data, origin, this.nearDirs, near, this.nearGeom, this.nearDist);
      } finally {
        this.restore(this.fixedGeoms, savedFixed);
      }
      for (let j = 0; j < near; j++) {
        const k = this.nearIndex[j]!;
        outGeom[k] = this.nearGeom[j]!;
        outDist[k] = this.nearDist[j]!;
      }
    }
    for (let k = 0; k < count; k++) {
      const p = pixel ? pixel[k]! : k;
      const sg = hits.geom[p]!;
      const sd = hits.dist[p]!;
      if (staticWins(sg, sd, outGeom[k]!, outDist[k]!)) {
        outGeom[k] = sg;
        outDist[k] = sd;
      }
    }
  }

  /**
   * Collects the bounding boxes of the moving geoms a ray can hit now (visible by MuJoCo's rule):
   * each primitive's box in its own frame (`geom_aabb`) placed in the world and widened by a
   * margin far above rounding error. False when some visible moving geom is not a primitive
   * (planes, meshes and the like are not bounded here): then every ray is cast against them.
   */
  private boundMovingGeoms(data: MjData): boolean {
    if (this.movingBoxes.length !== BOX * this.movingGeoms.length) {
      this.movingBoxes = new Float64Array(BOX * this.movingGeoms.length);
    }
    const n = geomBoxes(this.model, data, this.movingGeoms, this.movingBoxes, null, null);
    this.movingBoxCount = Math.max(n, 0);
    return n >= 0;
  }

  /** One batched `mj_multiRay` from `origin` along unit `vec`s; misses give geom -1. */
  private cast(
    data: MjData,
    origin: Float64Array,
    vec: Float64Array,
    count: number,
    outGeom: Int32Array,
    outDist: Float64Array,
  ): void {
    if (count === 0) return;
    // The binding insists that the outputs hold exactly `count` entries: a partial pass (overlays,
    // shadows) gets buffers of its own size, freed right after.
    const full = count === this.n;
    const gidBuf = full ? this.gidBuf! : new this.mujoco.IntBuffer(count);
    const distBuf = full ? this.distBuf! : new this.mujoco.DoubleBuffer(count);
    try {
      // The binding copies `vec` in and checks its length, so pass exactly 3*count numbers.
      const v = count * 3 === vec.length ? vec : vec.subarray(0, 3 * count);
      // The typings say number[], but the binding takes typed arrays (and copies them in).
      this.mujoco.mj_multiRay(
        this.model,
        data,
        origin as unknown as number[],
        v as unknown as number[],
        ALL_GROUPS,
        1,
        -1, // excluded bodies are hidden like hidden groups, so several can be excluded
        gidBuf,
        distBuf,
        count,
        FAR,
      );
      // Views are taken after the call: growth of WASM memory detaches older ones.
      const g = gidBuf.GetView() as Int32Array;
      const d = distBuf.GetView() as Float64Array;
      for (let i = 0; i < count; i++) {
        outGeom[i] = g[i]!;
        outDist[i] = d[i]!;
      }
    } finally {
      if (!full) {
        gidBuf.delete();
        distBuf.delete();
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Per-frame model state

  private frameViews(data: MjData): FrameViews {
    const m = this.model;
    return {
      type: m.geom_type as Int32Array,
      size: m.geom_size as Float64Array,
      aabb: m.geom_aabb as Float64Array,
      xpos: data.geom_xpos as Float64Array,
      xmat: data.geom_xmat as Float64Array,
      matid: m.geom_matid as Int32Array,
      texData: m.tex_data as Uint8Array,
      texAdr: m.tex_adr as Int32Array,
      texWidth: m.tex_width as Int32Array,
      texHeight: m.tex_height as Int32Array,
      texChannels: m.tex_nchannel as Int32Array,
      texRepeat: m.mat_texrepeat as Float32Array,
      texUniform: m.mat_texuniform as Uint8Array,
    };
  }

  /** Reads colours every frame, so recolouring a geom in the model shows up at once. */
  private refreshGeoms(): void {
    const m = this.model;
    const ngeom = m.ngeom;
    if (this.geomColour.length !== 4 * ngeom) {
      this.geomColour = new Float64Array(4 * ngeom);
      this.planeTex = new Int32Array(ngeom);
      this.isTranslucent = new Uint8Array(ngeom);
    }
    const rgba = m.geom_rgba as Float32Array;
    const matid = m.geom_matid as Int32Array;
    const matRgba = m.mat_rgba as Float32Array;
    const matTex = m.mat_texid as Int32Array;
    const texRoles = m.nmat > 0 ? matTex.length / m.nmat : 0;
    const texType = m.tex_type as Int32Array;
    const type = m.geom_type as Int32Array;
    const group = m.geom_group as Int32Array;
    const col = this.geomColour;
    this.translucent.length = 0;
    this.hiddenGeoms.length = 0;
    const bodyOf = m.geom_bodyid as Int32Array;
    for (let g = 0; g < ngeom; g++) {
      const mat = matid[g]!;
      const useMat =
        mat >= 0 &&
        rgba[4 * g] === DEFAULT_RGBA[0] &&
        rgba[4 * g + 1] === DEFAULT_RGBA[1] &&
        rgba[4 * g + 2] === DEFAULT_RGBA[2] &&
        rgba[4 * g + 3] === DEFAULT_RGBA[3];
      const src = useMat ? matRgba : rgba;
      const o = useMat ? 4 * mat : 4 * g;
      for (let c = 0; c < 4; c++) col[4 * g + c] = src[o + c]!;
      const alpha = col[4 * g + 3]!;
      const visible =
        this.group[Math.min(5, Math.max(0, group[g]!))] === 1 &&
        this.bodyExcluded[bodyOf[g]!] === 0;
      if (!visible && alpha > 0) this.hiddenGeoms.push(g);
      const seeThrough = visible && alpha > 0 && alpha < 1;
      this.isTranslucent[g] = seeThrough ? 1 : 0;
      if (seeThrough) this.translucent.push(g);
      let tex = -1;
      if (type[g] === GEOM_PLANE && mat >= 0 && texRoles > TEXROLE_RGB) {
        const t = matTex[mat * texRoles + TEXROLE_RGB]!;
        if (t >= 0 && texType[t] === TEXTURE_2D) tex = t;
      }
      this.planeTex[g] = tex;
    }
  }

  private updateLight(data: MjData): void {
    const m = this.model;
    const active = m.light_active as Uint8Array;
    let id = -1;
    for (let l = 0; l < m.nlight; l++) {
      if (active[l]) {
        id = l;
        break;
      }
    }
    const L = this.light;
    this.lightCastsShadow = id < 0 || (m.light_castshadow as Uint8Array)[id] !== 0;
    if (id < 0) {
      const inv = 1 / Math.hypot(DEFAULT_LIGHT[0], DEFAULT_LIGHT[1], DEFAULT_LIGHT[2]);
      L[0] = DEFAULT_LIGHT[0] * inv;
      L[1] = DEFAULT_LIGHT[1] * inv;
      L[2] = DEFAULT_LIGHT[2] * inv;
      this.lightIsPoint = false;
      return;
    }
    const type = (m.light_type as Int32Array)[id]!;
    if (type === LIGHT_DIRECTIONAL || type === LIGHT_IMAGE) {
      const dir = data.light_xdir as Float64Array;
      const x = -dir[3 * id]!;
      const y = -dir[3 * id + 1]!;
      const z = -dir[3 * id + 2]!;
      const inv = 1 / (Math.hypot(x, y, z) || 1);
      L[0] = x * inv;
      L[1] = y * inv;
      L[2] = z * inv;
      this.lightIsPoint = false;
    } else {
      const p = data.light_xpos as Float64Array;
      L[0] = p[3 * id]!;
      L[1] = p[3 * id + 1]!;
      L[2] = p[3 * id + 2]!;
      this.lightIsPoint = true;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Translucent overlays

  /**
   * Makes `geoms` invisible to rays the way MuJoCo defines invisible (alpha 0 and no material);
   * returns their alpha and material, for {@link RayCamera.restore}.
   */
  private hide(geoms: readonly number[]): Float64Array {
    const m = this.model;
    const rgba = m.geom_rgba as Float32Array;
    const matid = m.geom_matid as Int32Array;
    const saved = new Float64Array(2 * geoms.length);
    for (let k = 0; k < geoms.length; k++) {
      const g = geoms[k]!;
      saved[2 * k] = rgba[4 * g + 3]!;
      saved[2 * k + 1] = matid[g]!;
      rgba[4 * g + 3] = 0;
      matid[g] = -1;
    }
    return saved;
  }

  private restore(geoms: readonly number[], saved: Float64Array): void {
    const m = this.model;
    const rgba = m.geom_rgba as Float32Array;
    const matid = m.geom_matid as Int32Array;
    for (let k = 0; k < geoms.length; k++) {
      const g = geoms[k]!;
      rgba[4 * g + 3] = saved[2 * k]!;
      matid[g] = saved[2 * k + 1]!;
    }
  }

  /** Re-casts the pixels whose first hit is translucent, with translucent geoms hidden. */
  private castBehindOverlays(data: MjData): void {
    let count = 0;
    for (let i = 0; i < this.n; i++) {
      const g = this.hitGeom[i]!;
      if (g >= 0 && this.isTranslucent[g]) {
        this.auxPixel[count] = i;
        this.auxDirs[3 * count] = this.dirs[3 * i]!;
        this.auxDirs[3 * count + 1] = this.dirs[3 * i + 1]!;
        this.auxDirs[3 * count + 2] = this.dirs[3 * i + 2]!;
        count++;
      }
    }
    this.castSplit(
      data,
      this.staticHits?.overlay,
      this.origin,
      this.auxDirs,
      count,
      this.auxPixel,
      this.auxGeom,
      this.auxDist,
    );
    for (let k = 0; k < count; k++) {
      const i = this.auxPixel[k]!;
      this.surfGeom[i] = this.auxGeom[k]!;
      this.surfDist[i] = this.auxDist[k]!;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Geometry: hit points and normals

  /** Writes the world point `p` in geom `g`'s frame into `this.local`. */
  private toLocal(v: FrameViews, g: number, px: number, py: number, pz: number): void {
    const x = px - v.xpos[3 * g]!;
    const y = py - v.xpos[3 * g + 1]!;
    const z = pz - v.xpos[3 * g + 2]!;
    const R = v.xmat;
    const o = 9 * g;
    // local = Rᵀ (p - x), with R row-major (world = R · local)
    this.local[0] = R[o]! * x + R[o + 3]! * y + R[o + 6]! * z;
    this.local[1] = R[o + 1]! * x + R[o + 4]! * y + R[o + 7]! * z;
    this.local[2] = R[o + 2]! * x + R[o + 5]! * y + R[o + 8]! * z;
  }

  /**
   * Outward normal at `this.local` on a primitive geom, in the geom frame, into `this.normal`.
   * Returns false for types without a cheap analytic normal (mesh, height field, SDF).
   */
  private localNormal(v: FrameViews, g: number, type: number): boolean {
    const q = this.local;
    const s = v.size;
    const out = this.normal;
    const qx = q[0]!;
    const qy = q[1]!;
    const qz = q[2]!;
    switch (type) {
      case GEOM_PLANE:
        out[0] = 0;
        out[1] = 0;
        out[2] = 1;
        return true;
      case GEOM_SPHERE:
        out[0] = qx;
        out[1] = qy;
        out[2] = qz;
        return true;
      case GEOM_ELLIPSOID: {
        const a = s[3 * g]!;
        const b = s[3 * g + 1]!;
        const c = s[3 * g + 2]!;
        out[0] = qx / (a * a);
        out[1] = qy / (b * b);
        out[2] = qz / (c * c);
        return true;
      }
      case GEOM_CAPSULE: {
        const h = s[3 * g + 1]!;
        out[0] = qx;
        out[1] = qy;
        out[2] = qz - Math.max(-h, Math.min(h, qz));
        return true;
      }
      case GEOM_CYLINDER: {
        const r = s[3 * g]!;
        const h = s[3 * g + 1]!;
        const rho = Math.sqrt(qx * qx + qy * qy);
        // The nearer of the cap plane and the side wall is the one that was hit.
        if (Math.abs(Math.abs(qz) - h) < Math.abs(rho - r)) {
          out[0] = 0;
          out[1] = 0;
          out[2] = qz >= 0 ? 1 : -1;
        } else {
          out[0] = qx;
          out[1] = qy;
          out[2] = 0;
        }
        return true;
      }
      case GEOM_BOX: {
        const k = boxFace(qx / s[3 * g]!, qy / s[3 * g + 1]!, qz / s[3 * g + 2]!);
        out[0] = 0;
        out[1] = 0;
        out[2] = 0;
        out[k] = q[k]! >= 0 ? 1 : -1;
        return true;
      }
      default:
        return false;
    }
  }

  /** Hit points, local points, world normals and Lambert terms of the opaque surfaces. */
  private computeSurfaces(v: FrameViews): void {
    const n = this.n;
    const o = this.origin;
    const dirs = this.dirs;
    const pos = this.pos;
    const loc = this.loc;
    const nrm = this.nrm;
    const R = v.xmat;
    const nl = this.normal;
    const q = this.local;
    let anyFiniteDiff = false;
    for (let i = 0; i < n; i++) {
      const g = this.surfGeom[i]!;
      this.needsFiniteDiff[i] = 0;
      this.inside[i] = 0;
      if (g < 0) continue;
      const t = this.surfDist[i]!;
      const k = 3 * i;
      const dx = dirs[k]!;
      const dy = dirs[k + 1]!;
      const dz = dirs[k + 2]!;
      const px = o[0]! + t * dx;
      const py = o[1]! + t * dy;
      const pz = o[2]! + t * dz;
      pos[k] = px;
      pos[k + 1] = py;
      pos[k + 2] = pz;
      this.toLocal(v, g, px, py, pz);
      loc[k] = q[0]!;
      loc[k + 1] = q[1]!;
      loc[k + 2] = q[2]!;
      if (!this.localNormal(v, g, v.type[g]!)) {
        this.needsFiniteDiff[i] = 1;
        anyFiniteDiff = true;
        continue;
      }
      const m = 9 * g;
      const wx = R[m]! * nl[0]! + R[m + 1]! * nl[1]! + R[m + 2]! * nl[2]!;
      const wy = R[m + 3]! * nl[0]! + R[m + 4]! * nl[1]! + R[m + 5]! * nl[2]!;
      const wz = R[m + 6]! * nl[0]! + R[m + 7]! * nl[1]! + R[m + 8]! * nl[2]!;
      this.inside[i] = setFacing(nrm, k, wx, wy, wz, dx, dy, dz) ? 1 : 0;
    }
    if (anyFiniteDiff) this.finiteDiffNormals();

    // Lambert term n·l per pixel (0 where facing away), for shadows and shading.
    const L = this.light;
    const lx = L[0]!;
    const ly = L[1]!;
    const lz = L[2]!;
    const point = this.lightIsPoint;
    for (let i = 0; i < n; i++) {
      if (this.surfGeom[i]! < 0) continue;
      const k = 3 * i;
      let tx = lx;
      let ty = ly;
      let tz = lz;
      if (point) {
        tx = lx - pos[k]!;
        ty = ly - pos[k + 1]!;
        tz = lz - pos[k + 2]!;
        const inv = 1 / (Math.sqrt(tx * tx + ty * ty + tz * tz) || 1);
        tx *= inv;
        ty *= inv;
        tz *= inv;
      }
      const d = nrm[k]! * tx + nrm[k + 1]! * ty + nrm[k + 2]! * tz;
      this.ndotl[i] = Math.max(d, 0);
    }
  }

  /** Normals from neighbouring hit points on the same geom (meshes and the like). */
  private finiteDiffNormals(): void {
    const W = this.width;
    const H = this.height;
    const pos = this.pos;
    const geom = this.surfGeom;
    for (let i = 0; i < this.n; i++) {
      if (!this.needsFiniteDiff[i]) continue;
      const g = geom[i]!;
      const r = (i / W) | 0;
      const c = i - r * W;
      const k = 3 * i;
      // Prefer the right/lower neighbour, else the left/upper one (sign flipped).
      let jx = -1;
      let sx = 1;
      if (c + 1 < W && geom[i + 1] === g) jx = i + 1;
      else if (c > 0 && geom[i - 1] === g) {
        jx = i - 1;
        sx = -1;
      }
      let jy = -1;
      let sy = 1;
      if (r + 1 < H && geom[i + W] === g) jy = i + W;
      else if (r > 0 && geom[i - W] === g) {
        jy = i - W;
        sy = -1;
      }
      const dx = this.dirs[k]!;
      const dy = this.dirs[k + 1]!;
      const dz = this.dirs[k + 2]!;
      if (jx < 0 || jy < 0) {
        setFacing(this.nrm, k, -dx, -dy, -dz, dx, dy, dz);
        continue;
      }
      const ax = sx * (pos[3 * jx]! - pos[k]!);
      const ay = sx * (pos[3 * jx + 1]! - pos[k + 1]!);
      const az = sx * (pos[3 * jx + 2]! - pos[k + 2]!);
      const bx = sy * (pos[3 * jy]! - pos[k]!);
      const by = sy * (pos[3 * jy + 1]! - pos[k + 1]!);
      const bz = sy * (pos[3 * jy + 2]! - pos[k + 2]!);
      setFacing(this.nrm, k, ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx, dx, dy, dz);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Lighting

  /** Marks which lit hit points the light actually reaches, with one batched cast from it. */
  private computeShadows(data: MjData): void {
    const n = this.n;
    this.lit.fill(1);
    if (!this.shadows || !this.lightCastsShadow) return;
    const so = this.shadowOrigin;
    if (this.lightIsPoint) so.set(this.light);
    else {
      // A directional light is a point far away along its direction: near-parallel rays.
      for (let c = 0; c < 3; c++) {
        so[c] = this.origin[c]! + DIRECTIONAL_LIGHT_DISTANCE * this.light[c]!;
      }
    }
    const sx = so[0]!;
    const sy = so[1]!;
    const sz = so[2]!;
    const pos = this.pos;
    const aux = this.auxDirs;
    let count = 0;
    for (let i = 0; i < n; i++) {
      // Faces turned from the light are dark anyway: no ray needed.
      if (this.surfGeom[i]! < 0 || this.ndotl[i]! <= 0) continue;
      const k = 3 * i;
      const x = pos[k]! - sx;
      const y = pos[k + 1]! - sy;
      const z = pos[k + 2]! - sz;
      const len = Math.sqrt(x * x + y * y + z * z);
      if (len === 0) continue;
      const c = 3 * count;
      aux[c] = x / len;
      aux[c + 1] = y / len;
      aux[c + 2] = z / len;
      this.auxExpect[count] = len;
      this.auxPixel[count] = i;
      count++;
    }
    count = this.dropUnblockable(data, so, count);
    this.castSplit(
      data,
      this.staticHits?.shadow,
      so,
      aux,
      count,
      this.auxPixel,
      this.auxGeom,
      this.auxDist,
    );
    for (let k = 0; k < count; k++) {
      const blocked =
        this.auxGeom[k]! >= 0 && this.auxDist[k]! < this.auxExpect[k]! - SHADOW_EPSILON;
      if (blocked) this.lit[this.auxPixel[k]!] = 0;
    }
  }

  /**
   * Drops the shadow rays (compacting the aux lists) that no visible geom but the lit one can
   * block, so they are not cast; their pixels stay lit, as a cast would leave them. A ray is
   * kept when it passes within a geom's bounding box other than that of the geom it lights (a
   * convex primitive or plane facing the light, which cannot shade its own lit point), or when
   * the lit point lies on or below a plane other than its own (a plane meets a ray from above
   * only beyond a point above it). Grazing light, and points on geoms not bounded here, keep
   * their rays. Returns the number of rays left.
   */
  private dropUnblockable(data: MjData, so: Float64Array, count: number): number {
    if (count === 0 || !this.shortcuts) return count;
    const m = this.model;
    if (this.blockerBoxes.length !== BOX * m.ngeom) {
      this.blockerBoxes = new Float64Array(BOX * m.ngeom);
      this.blockerIds = new Int32Array(m.ngeom);
    }
    const planes: number[] = [];
    const all = Array.from({ length: m.ngeom }, (_, g) => g);
    const boxes = geomBoxes(m, data, all, this.blockerBoxes, this.blockerIds, planes);
    if (boxes < 0) return count;
    const type = m.geom_type as Int32Array;
    const own = this.auxGeom;
    for (let k = 0; k < count; k++) {
      const i = this.auxPixel[k]!;
      const g = this.surfGeom[i]!;
      const convex = type[g] === GEOM_PLANE || (type[g]! >= GEOM_SPHERE && type[g]! <= GEOM_BOX);
      // Seen from inside (the wrist camera within an arm link), a convex geom does shade its
      // own lit point: the light's ray meets its outer surface first.
      const outside = this.inside[i] === 0 && this.needsFiniteDiff[i] === 0;
      own[k] = convex && outside && this.ndotl[i]! > GRAZING ? g : -2;
    }
    const keep = this.nearFlag;
    this.nearRays.markExcept(
      so,
      this.auxDirs,
      count,
      this.blockerBoxes,
      this.blockerIds,
      boxes,
      own,
      keep,
    );
    const xpos = data.geom_xpos as Float64Array;
    const xmat = data.geom_xmat as Float64Array;
    const pos = this.pos;
    let left = 0;
    for (let k = 0; k < count; k++) {
      const i = this.auxPixel[k]!;
      let cast = keep[k] === 1;
      for (let j = 0; !cast && j < planes.length; j++) {
        const p = planes[j]!;
        if (p === own[k]) continue;
        // Height of the lit point above plane p (its local z; the plane's normal is local +z).
        const h =
          xmat[9 * p + 2]! * (pos[3 * i]! - xpos[3 * p]!) +
          xmat[9 * p + 5]! * (pos[3 * i + 1]! - xpos[3 * p + 1]!) +
          xmat[9 * p + 8]! * (pos[3 * i + 2]! - xpos[3 * p + 2]!);
        if (h <= PLANE_MARGIN) cast = true;
      }
      if (!cast) continue;
      this.auxPixel[left] = i;
      this.auxExpect[left] = this.auxExpect[k]!;
      copy3(this.auxDirs, left, this.auxDirs, k);
      left++;
    }
    return left;
  }

  // -------------------------------------------------------------------------------------------
  // Colour

  /**
   * Albedo of geom `g` at the local point `q[k..k+2]` into `this.albedo`: rgba, then the plane
   * texture, then the surface shader.
   */
  private albedoAt(v: FrameViews, g: number, type: number, q: Float64Array, k: number): void {
    const col = this.geomColour;
    const a = this.albedo;
    a[0] = col[4 * g]!;
    a[1] = col[4 * g + 1]!;
    a[2] = col[4 * g + 2]!;
    const tex = this.planeTex[g]!;
    if (tex >= 0) this.applyPlaneTexture(v, g, tex, q[k]!, q[k + 1]!);
    if (this.shaderCount === 0) return;
    const shader = this.shaders[g];
    if (shader === undefined) return;
    const local = this.local;
    local[0] = q[k]!;
    local[1] = q[k + 1]!;
    local[2] = q[k + 2]!;
    this.surfaceUV(v, g, type);
    const out = shader(this.uv[0]!, this.uv[1]!, local);
    if (out !== null) {
      a[0] = out[0]!;
      a[1] = out[1]!;
      a[2] = out[2]!;
    }
  }

  /** Multiplies `this.albedo` by the plane's 2-D texture at local (x, y) (nearest texel). */
  private applyPlaneTexture(v: FrameViews, g: number, tex: number, x: number, y: number): void {
    const mat = v.matid[g]!;
    const sx = v.size[3 * g]!;
    const sy = v.size[3 * g + 1]!;
    const rx = v.texRepeat[2 * mat]!;
    const ry = v.texRepeat[2 * mat + 1]!;
    // texuniform (or an infinite plane) repeats per metre, otherwise across the whole plane.
    const uniform = v.texUniform[mat] !== 0 || sx <= 0 || sy <= 0;
    const s = uniform ? x * rx : (x / (2 * sx) + 0.5) * rx;
    const t = uniform ? y * ry : (y / (2 * sy) + 0.5) * ry;
    const w = v.texWidth[tex]!;
    const h = v.texHeight[tex]!;
    const nc = v.texChannels[tex]!;
    const col = Math.min(w - 1, Math.floor((s - Math.floor(s)) * w));
    const row = Math.min(h - 1, Math.floor((1 - (t - Math.floor(t))) * h));
    const at = v.texAdr[tex]! + (row * w + col) * nc;
    const a = this.albedo;
    if (nc >= 3) {
      a[0] = a[0]! * (v.texData[at]! / 255);
      a[1] = a[1]! * (v.texData[at + 1]! / 255);
      a[2] = a[2]! * (v.texData[at + 2]! / 255);
    } else {
      const l = v.texData[at]! / 255;
      a[0] = a[0]! * l;
      a[1] = a[1]! * l;
      a[2] = a[2]! * l;
    }
  }

  /** Surface coordinates of `this.local` on geom `g` into `this.uv` (see setSurfaceShader). */
  private surfaceUV(v: FrameViews, g: number, type: number): void {
    const q = this.local;
    const s = v.size;
    const qx = q[0]!;
    const qy = q[1]!;
    const qz = q[2]!;
    let u: number;
    let w: number;
    switch (type) {
      case GEOM_PLANE:
        u = (qx / (s[3 * g]! || 1) + 1) / 2;
        w = (1 - qy / (s[3 * g + 1]! || 1)) / 2;
        break;
      case GEOM_BOX:
        faceUV(qx / s[3 * g]!, qy / s[3 * g + 1]!, qz / s[3 * g + 2]!, this.uv);
        return;
      case GEOM_SPHERE:
      case GEOM_ELLIPSOID: {
        const rz = type === GEOM_SPHERE ? s[3 * g]! : s[3 * g + 2]!;
        u = 0.5 + Math.atan2(qy, qx) / (2 * Math.PI);
        w = Math.acos(Math.max(-1, Math.min(1, qz / rz))) / Math.PI;
        break;
      }
      case GEOM_CYLINDER:
      case GEOM_CAPSULE: {
        const h = type === GEOM_CYLINDER ? s[3 * g + 1]! : s[3 * g + 1]! + s[3 * g]!;
        u = 0.5 + Math.atan2(qy, qx) / (2 * Math.PI);
        w = (h - qz) / (2 * h);
        break;
      }
      default: {
        const b = v.aabb;
        const o = 6 * g;
        faceUV(
          (qx - b[o]!) / (b[o + 3]! || 1),
          (qy - b[o + 1]!) / (b[o + 4]! || 1),
          (qz - b[o + 2]!) / (b[o + 5]! || 1),
          this.uv,
        );
        return;
      }
    }
    this.uv[0] = Math.max(0, Math.min(1, u));
    this.uv[1] = Math.max(0, Math.min(1, w));
  }

  /** Final colours: shaded surfaces, translucent overlays blended on top, sky where nothing. */
  private shade(v: FrameViews, rgb: Uint8Array): void {
    const n = this.n;
    const dirs = this.dirs;
    const nrm = this.nrm;
    const loc = this.loc;
    const a = this.albedo;
    for (let i = 0; i < n; i++) {
      const k = 3 * i;
      const dx = dirs[k]!;
      const dy = dirs[k + 1]!;
      const dz = dirs[k + 2]!;
      let r: number;
      let gr: number;
      let b: number;
      const g = this.surfGeom[i]!;
      if (g < 0) {
        // Sky above the horizon, grey below.
        if (dz >= 0) {
          r = 0.8 - 0.35 * dz;
          gr = 0.82 - 0.2 * dz;
          b = 0.85;
        } else {
          const f = Math.min(1, -2 * dz);
          r = 0.8 - 0.38 * f;
          gr = 0.82 - 0.4 * f;
          b = 0.85 - 0.41 * f;
        }
      } else {
        this.albedoAt(v, g, v.type[g]!, loc, k);
        const facing = -(nrm[k]! * dx + nrm[k + 1]! * dy + nrm[k + 2]! * dz);
        const intensity =
          AMBIENT + DIFFUSE * this.ndotl[i]! * this.lit[i]! + HEADLIGHT * Math.max(facing, 0);
        r = a[0]! * intensity;
        gr = a[1]! * intensity;
        b = a[2]! * intensity;
      }
      const h = this.hitGeom[i]!;
      if (h >= 0 && this.isTranslucent[h]) {
        const alpha = this.geomColour[4 * h + 3]!;
        const over = this.shadeOverlay(v, h, i);
        r = alpha * a[0]! * over + (1 - alpha) * r;
        gr = alpha * a[1]! * over + (1 - alpha) * gr;
        b = alpha * a[2]! * over + (1 - alpha) * b;
      }
      rgb[k] = toByte(r);
      rgb[k + 1] = toByte(gr);
      rgb[k + 2] = toByte(b);
    }
  }

  /**
   * Light intensity on translucent geom `h` where pixel `i`'s ray first meets it (two-sided, no
   * shadow); leaves its albedo in `this.albedo`.
   */
  private shadeOverlay(v: FrameViews, h: number, i: number): number {
    const k = 3 * i;
    const dx = this.dirs[k]!;
    const dy = this.dirs[k + 1]!;
    const dz = this.dirs[k + 2]!;
    const t = this.hitDist[i]!;
    const px = this.origin[0]! + t * dx;
    const py = this.origin[1]! + t * dy;
    const pz = this.origin[2]! + t * dz;
    const type = v.type[h]!;
    this.toLocal(v, h, px, py, pz);
    let nx = -dx;
    let ny = -dy;
    let nz = -dz;
    if (this.localNormal(v, h, type)) {
      const R = v.xmat;
      const m = 9 * h;
      const nl = this.normal;
      nx = R[m]! * nl[0]! + R[m + 1]! * nl[1]! + R[m + 2]! * nl[2]!;
      ny = R[m + 3]! * nl[0]! + R[m + 4]! * nl[1]! + R[m + 5]! * nl[2]!;
      nz = R[m + 6]! * nl[0]! + R[m + 7]! * nl[1]! + R[m + 8]! * nl[2]!;
      const inv = 1 / (Math.sqrt(nx * nx + ny * ny + nz * nz) || 1);
      nx *= inv;
      ny *= inv;
      nz *= inv;
    }
    let lx = this.light[0]!;
    let ly = this.light[1]!;
    let lz = this.light[2]!;
    if (this.lightIsPoint) {
      lx -= px;
      ly -= py;
      lz -= pz;
      const inv = 1 / (Math.sqrt(lx * lx + ly * ly + lz * lz) || 1);
      lx *= inv;
      ly *= inv;
      lz *= inv;
    }
    this.albedoAt(v, h, type, this.local, 0);
    const ndotl = Math.abs(nx * lx + ny * ly + nz * lz);
    const head = Math.abs(nx * dx + ny * dy + nz * dz);
    return AMBIENT + DIFFUSE * ndotl + HEADLIGHT * head;
  }
}

/**
 * Writes the bounding boxes (near-rays.ts layout) of the visible geoms among `geoms` into `out`,
 * their ids into `ids`: each primitive's box in its own frame (`geom_aabb`) placed in the world
 * and widened by a margin far above rounding error. Visible planes go to `planes` when given (a
 * plane has no finite box). Returns the number of boxes, or -1 when some visible geom cannot be
 * bounded here (a mesh, height field or SDF; a plane when `planes` is null).
 */
function geomBoxes(
  m: MjModel,
  data: MjData,
  geoms: Iterable<number>,
  out: Float64Array,
  ids: Int32Array | null,
  planes: number[] | null,
): number {
  const rgba = m.geom_rgba as Float32Array;
  const matid = m.geom_matid as Int32Array;
  const matRgba = m.mat_rgba as Float32Array;
  const type = m.geom_type as Int32Array;
  const aabb = m.geom_aabb as Float64Array;
  const xpos = data.geom_xpos as Float64Array;
  const xmat = data.geom_xmat as Float64Array;
  let o = 0;
  for (const g of geoms) {
    if (!rayVisible(g, matid, matRgba, rgba)) continue;
    const t = type[g]!;
    if (t === GEOM_PLANE && planes) {
      planes.push(g);
      continue;
    }
    if (t < GEOM_SPHERE || t > GEOM_BOX) return -1;
    const R = 9 * g;
    const b = 6 * g;
    // Centre: the geom's position plus its rotated box offset (row-major xmat: world = R·local).
    for (let i = 0; i < 3; i++) {
      out[o + i] =
        xpos[3 * g + i]! +
        xmat[R + 3 * i]! * aabb[b]! +
        xmat[R + 3 * i + 1]! * aabb[b + 1]! +
        xmat[R + 3 * i + 2]! * aabb[b + 2]!;
    }
    // Axis c (column c of R) scaled by the widened half extent along it.
    for (let c = 0; c < 3; c++) {
      const half = aabb[b + 3 + c]!;
      if (!(half >= 0) || !Number.isFinite(half)) return -1;
      const h = half * (1 + 1e-6) + BOX_MARGIN;
      for (let i = 0; i < 3; i++) out[o + 3 + 3 * c + i] = xmat[R + 3 * i + c]! * h;
    }
    if (ids) ids[o / BOX] = g;
    o += BOX;
  }
  return o / BOX;
}

/** Copies the 3-vector `src[3j..]` to `dst[3i..]`. */
function copy3(dst: Float64Array, i: number, src: Float64Array, j: number): void {
  dst[3 * i] = src[3 * j]!;
  dst[3 * i + 1] = src[3 * j + 1]!;
  dst[3 * i + 2] = src[3 * j + 2]!;
}

/**
 * Unit normal (x, y, z) turned to face against the ray (dx, dy, dz), written at `out[k..k+2]`.
 * Returns true when it had to be flipped (it pointed along the ray: the ray left the geom).
 */
function setFacing(
  out: Float64Array,
  k: number,
  x: number,
  y: number,
  z: number,
  dx: number,
  dy: number,
  dz: number,
): boolean {
  const len = Math.sqrt(x * x + y * y + z * z);
  // A degenerate normal faces the camera; one facing away is flipped (camera inside a geom).
  if (len === 0) {
    out[k] = -dx;
    out[k + 1] = -dy;
    out[k + 2] = -dz;
    return false;
  }
  const flipped = x * dx + y * dy + z * dz > 0;
  const s = flipped ? -1 / len : 1 / len;
  out[k] = x * s;
  out[k + 1] = y * s;
  out[k + 2] = z * s;
  return flipped;
}

/** Which box face (axis 0, 1 or 2) a point given in half-size units lies on: the largest. */
function boxFace(x: number, y: number, z: number): 0 | 1 | 2 {
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  const az = Math.abs(z);
  if (ax >= ay && ax >= az) return 0;
  return ay >= az ? 1 : 2;
}

/**
 * (u, v) on the face of a box hit at (x, y, z) in half-size units: upright with +z up (+y up on
 * the ±z faces), u to the right and v downwards as seen from outside the face.
 */
function faceUV(x: number, y: number, z: number, out: Float64Array): void {
  const k = boxFace(x, y, z);
  let u: number;
  let v: number;
  if (k === 0) {
    // Seen from +x with +z up, right is +y; from -x, right is -y.
    u = (Math.sign(x) * y + 1) / 2;
    v = (1 - z) / 2;
  } else if (k === 1) {
    u = (-Math.sign(y) * x + 1) / 2;
    v = (1 - z) / 2;
  } else {
    u = (Math.sign(z) * x + 1) / 2;
    v = (1 - y) / 2;
  }
  out[0] = Math.max(0, Math.min(1, u));
  out[1] = Math.max(0, Math.min(1, v));
}

/** [0, 1] → byte, clamped and rounded. */
function toByte(x: number): number {
  if (!(x > 0)) return 0;
  if (x >= 1) return 255;
  return (x * 255 + 0.5) | 0;
}
