/**
 * A thin wrapper over mujoco-js (the official MuJoCo WASM build): one module per process, models
 * loaded from the package's `assets/mujoco` folder, stepping, state save/restore and digests.
 *
 * Two pitfalls of the bindings shape this file (ARCHITECTURE.md §7): output arguments of `mj_*`
 * functions must be `DoubleBuffer`/`IntBuffer` objects (a plain Float64Array silently stays zero),
 * and `data.contact` / `.get(i)` return copies that must be `.delete()`d.
 *
 * @example
 *   const engine = await Engine.load("tabletop_kitchen.xml");
 *   engine.step(10);
 *   const digest = engine.stateDigest();
 *   engine.close();
 */
import type { DoubleBuffer, MainModule, MjData, MjModel } from "mujoco-js";
import { folderFrom, joinPath, listAssets, readAssetText } from "../../core/assets.js";
import { type Digest, sha256 } from "../../core/digest.js";
import { ProvaelError } from "../../core/errors.js";

let modulePromise: Promise<MainModule> | undefined;

/** The MuJoCo WASM module, loaded once per process (about 170 ms). */
export function mujocoModule(): Promise<MainModule> {
  // Imported on first use: commands that play no episode never load the WASM glue.
  modulePromise ??= import("mujoco-js")
    .then((m) => m.default())
    .catch((e: unknown) => {
      modulePromise = undefined;
      throw new ProvaelError("suite/load", "could not load the MuJoCo WASM module (mujoco-js)", {
        cause: e,
        hint: "check that the mujoco-js package is installed (npm ls mujoco-js)",
      });
    });
  return modulePromise;
}

/**
 * The package root. This file sits three folders below it both as `src/suites/mujoco/engine.ts`
 * (vitest) and as `dist/suites/mujoco/engine.js` (after the build); in a page, "" (the page's
 * files are package-relative).
 */
export function packageRoot(): string {
  return folderFrom(import.meta.url, "../../../");
}

/** Folder holding the MJCF files. */
export function defaultAssetsDir(): string {
  return joinPath(packageRoot(), "assets", "mujoco");
}

/** MJCF folders already copied into the module's virtual file system, by host path. */
const mountedDirs = new Map<string, string>();

function mountAssets(mj: MainModule, dir: string): string {
  const existing = mountedDirs.get(dir);
  if (existing !== undefined) return existing;
  const virtual = `/provael-mjcf-${mountedDirs.size}`;
  let files: string[];
  try {
    files = listAssets(dir).filter((f) => f.endsWith(".xml"));
  } catch (e) {
    throw new ProvaelError("suite/load", `cannot read the MuJoCo assets folder ${dir}`, {
      cause: e,
      hint: "the package's assets/ folder must ship beside dist/",
    });
  }
  mj.FS.mkdir(virtual);
  for (const f of files) mj.FS.writeFile(`${virtual}/${f}`, readAssetText(joinPath(dir, f)));
  mountedDirs.set(dir, virtual);
  return virtual;
}

export type ObjectKind = "body" | "joint" | "geom" | "site" | "camera" | "actuator";

const OBJ_TYPE: Record<ObjectKind, number> = {
  body: 1,
  joint: 3,
  geom: 5,
  site: 6,
  camera: 7,
  actuator: 19,
};

/** mjSTATE_INTEGRATION: everything mj_step reads, so a restored state continues bit for bit. */
const STATE_SPEC = 8191;

/** One robot-involved contact with its normal force, in body names. */
export interface ContactReading {
  geom1: number;
  geom2: number;
  body1: number;
  body2: number;
  /** Normal force in newtons (first component of mj_contactForce). */
  force: number;
}

export interface LoadOptions {
  /** Folder of the MJCF files (default: the package's assets/mujoco). */
  assetsDir?: string;
}

/** A loaded model with its data. Not thread-safe; one per episode in flight. */
export class Engine {
  readonly mj: MainModule;
  model: MjModel;
  data: MjData;
  /** The model as loaded, kept to undo runtime model edits (scene edits). */
  private readonly pristine: MjModel;
  private readonly forceBuf: DoubleBuffer;
  private readonly stateBuf: DoubleBuffer;
  private readonly stateSize: number;
  private closed = false;

  private constructor(mj: MainModule, model: MjModel) {
    this.mj = mj;
    this.pristine = model;
    this.model = new mj.MjModel(model);
    this.data = new mj.MjData(this.model);
    this.forceBuf = new mj.DoubleBuffer(6);
    this.stateSize = mj.mj_stateSize(this.model, STATE_SPEC);
    this.stateBuf = new mj.DoubleBuffer(this.stateSize);
  }

  /** Loads an MJCF file from the assets folder (includes resolve within that folder). */
  static async load(file: string, options: LoadOptions = {}): Promise<Engine> {
    const mj = await mujocoModule();
    const virtual = mountAssets(mj, options.assetsDir ?? defaultAssetsDir());
    let model: MjModel;
    try {
      model = mj.MjModel.loadFromXML(`${virtual}/${file}`);
    } catch (e) {
      throw new ProvaelError("suite/load", `MuJoCo could not compile ${file}`, {
        cause: e,
        details: { file },
      });
    }
    if (!model) throw new ProvaelError("suite/load", `MuJoCo could not compile ${file}`);
    return new Engine(mj, model);
  }

  get timestep(): number {
    return this.model.opt.timestep;
  }

  /** Id of a named model element; throws when it is missing (a broken MJCF, not a user error). */
  id(kind: ObjectKind, name: string): number {
    const id = this.mj.mj_name2id(this.model, OBJ_TYPE[kind], name);
    if (id < 0) {
      throw new ProvaelError("suite/load", `the MuJoCo model has no ${kind} named '${name}'`, {
        details: { kind, name },
      });
    }
    return id;
  }

  /** Id of a named element, or -1. */
  findId(kind: ObjectKind, name: string): number {
    return this.mj.mj_name2id(this.model, OBJ_TYPE[kind], name);
  }

  name(kind: ObjectKind, id: number): string {
    return this.mj.mj_id2name(this.model, OBJ_TYPE[kind], id);
  }

  /** mj_resetData: qpos0, zero velocities, controls and time. */
  resetData(): void {
    this.mj.mj_resetData(this.model, this.data);
  }

  /** Restores every model field to the loaded values (undoes scene edits). */
  restoreModel(): void {
    this.data.delete();
    this.model.delete();
    this.model = new this.mj.MjModel(this.pristine);
    this.data = new this.mj.MjData(this.model);
  }

  forward(): void {
    this.mj.mj_forward(this.model, this.data);
  }

  step(substeps = 1): void {
    for (let i = 0; i < substeps; i++) this.mj.mj_step(this.model, this.data);
  }

  /** Recomputes model constants that depend on masses and sizes (after a scene edit). */
  setConst(): void {
    this.mj.mj_setConst(this.model, this.data);
  }

  /** The full integration state (time, qpos, qvel, act, ctrl, warm start, mocap, …). */
  saveState(): Float64Array {
    this.mj.mj_getState(this.model, this.data, this.stateBuf, STATE_SPEC);
    return Float64Array.from(this.stateBuf.GetView() as Float64Array);
  }

  restoreState(state: Float64Array): void {
    if (state.length !== this.stateSize) {
      throw new ProvaelError("internal/invariant", "state vector has the wrong size", {
        details: { expected: this.stateSize, got: state.length },
      });
    }
    // The binding copies the typed array into WASM memory (input arguments need no buffer).
    this.mj.mj_setState(this.model, this.data, state as unknown as number[], STATE_SPEC);
    this.forward();
  }

  /** SHA-256 of the full integration state's bytes. */
  stateDigest(): Digest {
    const s = this.saveState();
    return sha256(new Uint8Array(s.buffer, s.byteOffset, s.byteLength));
  }

  /** SHA-256 of qpos's bytes. */
  qposDigest(): Digest {
    const q = Float64Array.from(this.data.qpos as Float64Array);
    return sha256(new Uint8Array(q.buffer));
  }

  /**
   * Contacts for which `keep(body1, body2)` holds, with normal forces. Frees every copy the
   * bindings make.
   */
  contacts(keep: (body1: number, body2: number) => boolean): ContactReading[] {
    const out: ContactReading[] = [];
    const n = this.data.ncon;
    if (n === 0) return out;
    const geomBody = this.model.geom_bodyid as Int32Array;
    const list = this.data.contact;
    try {
      for (let i = 0; i < n; i++) {
        const c = list.get(i);
        if (!c) continue;
        const g1 = c.geom1;
        const g2 = c.geom2;
        c.delete();
        const b1 = geomBody[g1] ?? -1;
        const b2 = geomBody[g2] ?? -1;
        if (!keep(b1, b2)) continue;
        this.mj.mj_contactForce(this.model, this.data, i, this.forceBuf);
        const f = (this.forceBuf.GetView() as Float64Array)[0] ?? 0;
        out.push({ geom1: g1, geom2: g2, body1: b1, body2: b2, force: f });
      }
    } finally {
      list.delete();
    }
    return out;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.forceBuf.delete();
    this.stateBuf.delete();
    this.data.delete();
    this.model.delete();
    this.pristine.delete();
  }
}
