/**
 * A loaded tiny-vla network ready to run: observation -> action chunk, the input gradient for
 * white-box attacks, and live weight arrays that can be edited and re-uploaded.
 *
 * @example
 *   const rt = await TinyVlaRuntime.create(loadWeights(dir));
 *   const chunk = rt.predict(obs); // Float32Array(chunk * 7)
 */
import { ProvaelError } from "../../core/errors.js";
import type { Image, Observation, Vec3 } from "../../core/types.js";
import { type tf as TF, tfReady } from "./backend.js";
import {
  batchTensors,
  forward,
  type HostBatch,
  locatorConfig,
  locatorForward,
  locatorOutputs,
  moveDims,
  OFFSET_UNIT,
  patchGrid,
  patchify,
  resizeAdjoint,
  resizeArea,
  stateFeatureDim,
  stateFeatures,
  type TinyVlaConfig,
  textTensor,
  toTensors,
  unpatchify,
  type Weights,
  type WeightTensors,
} from "./model.js";
import { type TextInput, type TextUnits, WordSequences } from "./text-units.js";
import type { LoadedWeights } from "./weights.js";

type Tf = typeof TF;

export class TinyVlaRuntime {
  private tensors: WeightTensors;
  /**
   * The last instruction's text input: an episode's instruction rarely changes from one read to
   * the next, and encoding it (subword units: every n-gram hashed) would be redone at each.
   * Read only (tensors copy it).
   */
  private lastText: { instruction: string; input: TextInput } | undefined;

  private constructor(
    private readonly tf: Tf,
    readonly config: TinyVlaConfig,
    /** How instructions become the network's text input (v1 words or subword units). */
    readonly text: TextUnits,
    /** Master copies of the weights: edits here take effect after `rebuild()`. */
    readonly weights: Weights,
  ) {
    this.tensors = toTensors(tf, config, weights);
  }

  static async create(
    loaded: Pick<LoadedWeights, "config" | "text" | "weights">,
  ): Promise<TinyVlaRuntime> {
    if (loaded.text.size !== loaded.config.vocabSize) {
      throw new ProvaelError(
        "policy/load",
        `tiny-vla text units give ${loaded.text.size}-wide bags, the network reads ${loaded.config.vocabSize}`,
      );
    }
    const tf = await tfReady();
    return new TinyVlaRuntime(tf, loaded.config, loaded.text, loaded.weights);
  }

  /** The network's text input for an instruction (the last one's is kept). */
  private textInput(instruction: string): TextInput {
    if (this.lastText?.instruction !== instruction)
      this.lastText = { instruction, input: this.readInput(instruction) };
    return this.lastText.input;
  }

  /** An instruction as this network reads it: its units' input, or its words (`textContext`). */
  private readInput(instruction: string): TextInput {
    if (!this.config.textContext) return this.text.input(instruction);
    const seq = new WordSequences(this.text, 1);
    seq.setRow(0, this.text.encode(instruction));
    return seq;
  }

  /** Re-uploads the weight tensors from the master arrays (after in-place edits). */
  rebuild(): void {
    for (const t of Object.values(this.tensors)) t.dispose();
    this.tensors = toTensors(this.tf, this.config, this.weights);
  }

  /**
   * The named object's world (x, y) as this observation shows it: the state-free localisation
   * head of an "anchored" model. The policy calls it on an episode's first observation and
   * keeps the result (the object does not move until it is grasped).
   */
  localise(obs: Observation): Float32Array {
    const cfg = this.config;
    if (cfg.locator) return this.locate(obs);
    const host = { ...this.hostInput(obs), offset: new Float32Array(cfg.aux) };
    const out = this.tf.tidy(
      () => forward(this.tf, this.tensors, batchTensors(this.tf, cfg, host), cfg, true).aux,
    );
    if (!out) throw new ProvaelError("policy/error", "this tiny-vla has no localisation head");
    const raw = out.dataSync() as Float32Array;
    out.dispose();
    return this.toWorld(raw);
  }

  /** What the locator reads of an observation: its first camera's patches, and the words. */
  private locatorInput(obs: Observation): {
    img: Image;
    patches: Float32Array;
    text: TextInput;
    shape: [number, number, number];
  } {
    const cfg = this.config;
    const lc = locatorConfig(cfg);
    const cam = cfg.cameras[0] as string;
    const img = obs.images[cam];
    if (!img || img.width === 0 || img.channels !== 3) {
      throw new ProvaelError("policy/error", `tiny-vla needs an RGB '${cam}' image`);
    }
    const { count, size } = patchGrid(lc);
    const patches = new Float32Array(count * size);
    patchify(lc, resizeArea(img, lc.imageSize), patches);
    return {
      img,
      patches,
      text: this.textInput(obs.instruction),
      shape: [1, count, size],
    };
  }

  /** `localise` through the locator (see `TinyVlaConfig.locator`). */
  private locate(obs: Observation): Float32Array {
    const cfg = this.config;
    const { patches, text, shape } = this.locatorInput(obs);
    const out = this.tf.tidy(() =>
      locatorForward(
        this.tf,
        this.tensors,
        this.tf.tensor3d(patches, shape),
        textTensor(this.tf, cfg, text, 1),
        cfg,
      ),
    );
    const raw = out.dataSync() as Float32Array;
    out.dispose();
    return this.toWorld(raw);
  }

  /**
   * The locator's answer in its parts, for diagnosis: the image point it looked at ([-1, 1]
   * image coordinates), the table position its map gives for that point (before any second
   * look) and the final table position `localise` returns. Telling which part a changed
   * sentence moved says whether it moved where the locator looks or how the map places it.
   */
  locateParts(obs: Observation): {
    point: Float32Array;
    mapped: Float32Array;
    world: Float32Array;
  } {
    const cfg = this.config;
    if (!cfg.locator) throw new ProvaelError("policy/error", "this tiny-vla has no locator");
    const { patches, text, shape } = this.locatorInput(obs);
    const [point, mapped, world] = this.tf.tidy(() => {
      const out = locatorOutputs(
        this.tf,
        this.tensors,
        this.tf.tensor3d(patches, shape),
        textTensor(this.tf, cfg, text, 1),
        cfg,
      );
      return [out.xy, out.mapped, out.world].map((t) => t.dataSync() as Float32Array);
    });
    return {
      point: Float32Array.from(point as Float32Array),
      mapped: this.toWorld(mapped as Float32Array),
      world: this.toWorld(world as Float32Array),
    };
  }

  /** A normalised localisation output as a table position (m). */
  private toWorld(raw: Float32Array): Float32Array {
    const cfg = this.config;
    return Float32Array.from(raw, (v, k) => v * (cfg.auxScale[k] ?? 1) + (cfg.auxMean?.[k] ?? 0));
  }

  /** Whether the model acts relative to an object position fixed per episode (`localise`). */
  get anchored(): boolean {
    return this.config.auxMode === "anchored" && this.config.auxToHead === true;
  }

  /** The network input for one observation (and the episode's anchor, for anchored models). */
  hostInput(obs: Observation, anchor?: Float32Array): HostBatch {
    const cfg = this.config;
    const { count, size } = patchGrid(cfg);
    const patches = cfg.cameras.map((cam) => {
      const img = obs.images[cam];
      if (!img || img.width === 0 || img.height === 0 || img.channels !== 3) {
        throw new ProvaelError("policy/error", `tiny-vla needs an RGB '${cam}' image`, {
          details: { camera: cam, cameras: Object.keys(obs.images) },
          hint: "run it on a suite that renders the agentview and wrist cameras",
        });
      }
      const out = new Float32Array(count * size);
      patchify(cfg, resizeArea(img, cfg.imageSize), out);
      return out;
    });
    if (obs.state.length < cfg.stateDim) {
      throw new ProvaelError("policy/error", `tiny-vla needs a state of ${cfg.stateDim} values`, {
        details: { got: obs.state.length },
      });
    }
    const state = new Float32Array(stateFeatureDim(cfg));
    stateFeatures(cfg, obs.state, state);
    const text = this.textInput(obs.instruction);
    if (!anchor) return { size: 1, patches, text, state };
    const offset = new Float32Array(cfg.aux);
    for (let k = 0; k < cfg.aux; k++)
      offset[k] = ((anchor[k] as number) - (state[k] as number)) / OFFSET_UNIT;
    return { size: 1, patches, text, state, offset };
  }

  /** The anchor to use: the given one, or (anchored models) this observation's localisation. */
  private anchorFor(obs: Observation, anchor?: Float32Array): Float32Array | undefined {
    if (!this.anchored) return undefined;
    return anchor ?? this.localise(obs);
  }

  /** The network's raw outputs: unclipped movement [chunk x (actionDim-1)] and gripper logits [chunk]. */
  raw(obs: Observation, anchor?: Float32Array): { move: Float32Array; grip: Float32Array } {
    const cfg = this.config;
    const host = this.hostInput(obs, this.anchorFor(obs, anchor));
    // tidy walks what it returns, so return tensors and read them outside.
    const out = this.tf.tidy(() => {
      const o = forward(this.tf, this.tensors, batchTensors(this.tf, cfg, host), cfg);
      return [o.move, o.grip];
    });
    const move = out[0]?.dataSync() as Float32Array;
    const grip = out[1]?.dataSync() as Float32Array;
    for (const t of out) t.dispose();
    return { move, grip };
  }

  /**
   * The predicted chunk, `chunk` actions of `actionDim` each: continuous dims clipped to
   * [-1, 1], gripper +1 (close) when its logit is positive, else -1.
   */
  predict(obs: Observation, anchor?: Float32Array): Float32Array {
    const cfg = this.config;
    const { move, grip } = this.raw(obs, anchor);
    const m = moveDims(cfg);
    const A = cfg.actionDim;
    const chunk = new Float32Array(cfg.chunk * A);
    for (let k = 0; k < cfg.chunk; k++) {
      for (let d = 0; d < m; d++)
        chunk[k * A + d] = Math.max(-1, Math.min(1, move[k * m + d] as number));
      chunk[k * A + m] = (grip[k] as number) > 0 ? 1 : -1;
    }
    return chunk;
  }

  /**
   * Gradient of (first action's translation · direction) with respect to one camera's pixels
   * (0-255 units, HWC, the camera image's own size), through the area resize; and its value.
   *
   * With an `anchor` (the policy has already localised this episode's object) the anchor is a
   * constant, as it is for the policy. Without one, an anchored model localises from this very
   * observation, so the gradient also runs through the locator (when it reads `camera`): the
   * pixels then move where the policy will go for the rest of the episode, not only how it
   * steps. The chain through the anchor is d objective / d offset · d offset / d anchor ·
   * d anchor / d pixels, the last by the locator's own backward pass.
   */
  inputGradient(
    obs: Observation,
    camera: string,
    direction: Vec3,
    anchor?: Float32Array,
  ): { value: number; grad: Float32Array } {
    const tf = this.tf;
    const cfg = this.config;
    const c = cfg.cameras.indexOf(camera);
    const img = obs.images[camera];
    if (c < 0 || !img) {
      throw new ProvaelError("attack/error", `tiny-vla reads no camera '${camera}'`, {
        details: { cameras: cfg.cameras },
      });
    }
    const throughLocator =
      this.anchored && anchor === undefined && cfg.locator !== undefined && c === 0;
    const host = this.hostInput(obs, this.anchorFor(obs, anchor));
    const { count, size } = patchGrid(cfg);
    const m = moveDims(cfg);
    const dir = new Float32Array(m);
    dir.set(direction.slice(0, Math.min(3, m)));
    const out = tf.tidy(() => {
      const input = batchTensors(tf, cfg, host);
      const dirT = tf.tensor1d(dir);
      const objective = (x: TF.Tensor, offset?: TF.Tensor) => {
        const patches = input.patches.map((p, k) => (k === c ? x : p));
        const o = forward(
          tf,
          this.tensors,
          { ...input, patches, ...(offset ? { offset } : {}) },
          cfg,
        );
        const first = tf.reshape(tf.slice(o.move, [0, 0, 0], [1, 1, m]), [m]);
        return tf.sum(tf.mul(first, dirT));
      };
      const x = input.patches[c] as TF.Tensor;
      if (!throughLocator || !input.offset) {
        const { value, grad } = tf.valueAndGrad(objective)(x);
        return [value, tf.reshape(grad, [count * size])];
      }
      const { value, grads } = tf.valueAndGrads((xv: TF.Tensor, ov: TF.Tensor) =>
        objective(xv, ov),
      )([x, input.offset]);
      return [value, tf.reshape(grads[0] as TF.Tensor, [count * size]), grads[1] as TF.Tensor];
    });
    const value = out[0]?.dataSync()[0] as number;
    const grad = out[1]?.dataSync() as Float32Array;
    const dOffset = out[2]?.dataSync() as Float32Array | undefined;
    for (const t of out) t.dispose();
    const full = toPixels(cfg, grad, img);
    if (dOffset) {
      const viaAnchor = this.locatorGradient(obs, dOffset);
      for (let i = 0; i < full.length; i++)
        full[i] = (full[i] as number) + (viaAnchor[i] as number);
    }
    return { value, grad: full };
  }

  /**
   * The locator's backward pass: given d objective / d offset (the actor's input, in
   * OFFSET_UNIT, where offset = (anchor - gripper) / OFFSET_UNIT), the gradient with respect to
   * the camera's pixels (0-255 units, the camera image's own size).
   */
  private locatorGradient(obs: Observation, dOffset: Float32Array): Float32Array {
    const tf = this.tf;
    const cfg = this.config;
    const { img, patches, text, shape } = this.locatorInput(obs);
    // The locator outputs the anchor normalised: anchor = raw * auxScale + auxMean.
    const weight = Float32Array.from(dOffset, (g, k) => (g * (cfg.auxScale[k] ?? 1)) / OFFSET_UNIT);
    const g = tf.tidy(() => {
      const bag = textTensor(tf, cfg, text, 1);
      const w = tf.tensor2d(weight, [1, cfg.aux]);
      const f = (x: TF.Tensor) => tf.sum(tf.mul(locatorForward(tf, this.tensors, x, bag, cfg), w));
      return tf.grad(f)(tf.tensor3d(patches, shape));
    });
    const raw = new Float32Array(g.dataSync() as Float32Array);
    g.dispose();
    return toPixels(locatorConfig(cfg), raw, img);
  }

  dispose(): void {
    for (const t of Object.values(this.tensors)) t.dispose();
  }
}

/**
 * A gradient on the network's patches (which hold pixel/255 - 0.5) as a gradient on the camera
 * image's pixels: d/dpixel = d/dpatch / 255, then patchify and the area resize undone.
 */
function toPixels(cfg: TinyVlaConfig, grad: Float32Array, img: Image): Float32Array {
  const small = unpatchify(cfg, grad);
  for (let i = 0; i < small.length; i++) small[i] = (small[i] as number) / 255;
  return resizeAdjoint(small, cfg.imageSize, img.width, img.height);
}
