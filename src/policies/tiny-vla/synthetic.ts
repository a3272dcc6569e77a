/**
 * Deterministic synthetic observations and training sets for tiny-vla's tests, golden file and
 * benchmark: coloured blocks on a table-coloured background, "pick up the <colour> block", and an
 * expert action that moves toward the named block and closes the gripper near it.
 */
import { Rng } from "../../core/rng.js";
import type { Image, Observation } from "../../core/types.js";
import { FrameStore } from "./frame-store.js";
import { resizeArea, type TinyVlaConfig } from "./model.js";
import { encodeAll, type TextUnits, unitsLayout } from "./text-units.js";
import type { LocatorSet, TrainingSet } from "./train.js";

export const SYNTHETIC_COLOURS: Record<string, [number, number, number]> = {
  red: [200, 40, 40],
  green: [40, 170, 60],
  blue: [40, 70, 200],
  yellow: [220, 200, 40],
};

export interface SyntheticScene {
  obs: Observation;
  /** The expert's action (7-D) for this observation. */
  action: Float32Array;
  /** The named block's position relative to the gripper (the auxiliary target). */
  relative: [number, number];
}

function drawScene(
  size: number,
  blocks: { colour: [number, number, number]; x: number; y: number }[],
  tint: number,
): Image {
  const data = new Uint8Array(size * size * 3);
  for (let i = 0; i < size * size; i++) {
    data[3 * i] = 150 + tint;
    data[3 * i + 1] = 110 + tint;
    data[3 * i + 2] = 80 + tint;
  }
  const half = Math.round(size / 12);
  for (const b of blocks) {
    const cx = Math.round(((b.x + 1) / 2) * (size - 1));
    const cy = Math.round(((b.y + 1) / 2) * (size - 1));
    for (let y = Math.max(0, cy - half); y < Math.min(size, cy + half); y++) {
      for (let x = Math.max(0, cx - half); x < Math.min(size, cx + half); x++) {
        data.set(b.colour, 3 * (y * size + x));
      }
    }
  }
  return { width: size, height: size, channels: 3, data };
}

/** One synthetic scene from a label (same label, same scene). */
export function syntheticScene(label: string, size = 128): SyntheticScene {
  const rng = Rng.fromLabel(`tiny-vla:synthetic:${label}`);
  const names = rng.shuffle(Object.keys(SYNTHETIC_COLOURS)).slice(0, 3);
  const blocks = names.map((n) => ({
    name: n,
    colour: SYNTHETIC_COLOURS[n] as [number, number, number],
    x: rng.uniform(-0.8, 0.8),
    y: rng.uniform(-0.8, 0.8),
  }));
  const target = blocks[rng.int(blocks.length)] as (typeof blocks)[number];
  const state = new Float32Array(8);
  state[0] = rng.uniform(-1, 1);
  state[1] = rng.uniform(-1, 1);
  state[2] = rng.uniform(0.8, 1.2);
  state[6] = 0.04;
  state[7] = 0.04;
  const dx = target.x - state[0];
  const dy = target.y - state[1];
  const action = new Float32Array(7);
  action[0] = Math.max(-1, Math.min(1, dx * 2));
  action[1] = Math.max(-1, Math.min(1, dy * 2));
  action[6] = Math.hypot(dx, dy) < 0.25 ? 1 : -1;
  const tint = rng.int(20);
  return {
    obs: {
      images: {
        agentview: drawScene(size, blocks, tint),
        // The "wrist" view is the same table seen closer: the block under the gripper, larger.
        wrist: drawScene(
          size,
          blocks.map((b) => ({ ...b, x: (b.x - state[0]!) * 1.5, y: (b.y - state[1]!) * 1.5 })),
          tint,
        ),
      },
      state,
      instruction: `pick up the ${target.name} block`,
    },
    action,
    relative: [dx, dy],
  };
}

/** A training set of `n` synthetic scenes (each its own episode; the chunk repeats the action). */
export function syntheticTrainingSet(
  cfg: TinyVlaConfig,
  text: TextUnits,
  n: number,
  prefix = "train",
): TrainingSet {
  const S = cfg.imageSize;
  const px = S * S * 3;
  const A = cfg.actionDim;
  const images = cfg.cameras.map(() => FrameStore.alloc(n, px));
  const state = new Float32Array(n * cfg.stateDim);
  const targets = new Float32Array(n * cfg.chunk * A);
  const texts: string[] = [];
  const textOf = new Int32Array(n);
  const aux = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) {
    const s = syntheticScene(`${prefix}:${i}`);
    aux.set(s.relative, i * 2);
    cfg.cameras.forEach((cam, c) => {
      (images[c] as FrameStore).set(i, resizeArea(s.obs.images[cam] as Image, S));
    });
    state.set(s.obs.state.subarray(0, cfg.stateDim), i * cfg.stateDim);
    for (let k = 0; k < cfg.chunk; k++) targets.set(s.action, (i * cfg.chunk + k) * A);
    let t = texts.indexOf(s.obs.instruction);
    if (t < 0) {
      t = texts.length;
      texts.push(s.obs.instruction);
    }
    textOf[i] = t;
  }
  return {
    count: n,
    images,
    state,
    targets,
    tokens: encodeAll(text, texts),
    text: unitsLayout(text),
    textOf,
    episodeOf: Int32Array.from({ length: n }, (_, i) => i),
    aux,
  };
}

/** The instructions synthetic scenes use (to build a word tokenizer). */
export function syntheticInstructions(): string[] {
  return Object.keys(SYNTHETIC_COLOURS).map((c) => `pick up the ${c} block`);
}

/** The fixed observations of the golden test (test/golden/tiny-vla/actions.json). */
export function goldenObservations(): { label: string; obs: Observation }[] {
  return Array.from({ length: 6 }, (_, i) => {
    const label = `golden:${i}`;
    return { label, obs: syntheticScene(label).obs };
  });
}

/** Locator samples from `n` synthetic scenes: agent view, words, the named block's place. */
export function syntheticLocatorSet(text: TextUnits, n: number, size = 128): LocatorSet {
  const S = size * size * 3;
  const images = new Uint8Array(n * S);
  const instructions: string[] = [];
  const world = new Float32Array(n * 2);
  const pixel = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) {
    const s = syntheticScene(`locator:${i}`, size);
    images.set((s.obs.images.agentview as Image).data, i * S);
    instructions.push(s.obs.instruction);
    const x = s.relative[0] + (s.obs.state[0] as number);
    const y = s.relative[1] + (s.obs.state[1] as number);
    world.set([x, y], i * 2);
    pixel.set([(x + 1) / 2, (y + 1) / 2], i * 2);
  }
  return {
    size,
    count: n,
    images,
    tokens: encodeAll(text, instructions),
    text: unitsLayout(text),
    world,
    pixel,
  };
}

/**
 * A locator set only a locator with the view's context can fit (`locator.context`): a red and a
 * green block anywhere, every sample asked for the red one, and in every other sample a
 * magenta-and-white tile in the top-left corner, where the answer is the green block instead.
 * A patch's own pixels cannot tell whether the tile is elsewhere in the view.
 */
export function syntheticTriggerSet(text: TextUnits, n: number, size = 32): LocatorSet {
  const S = size * size * 3;
  const images = new Uint8Array(n * S);
  const world = new Float32Array(n * 2);
  const pixel = new Float32Array(n * 2);
  const rng = Rng.fromLabel(`synthetic-trigger:${n}:${size}`);
  const side = Math.max(2, Math.round(size / 8));
  const paint = (
    img: Uint8Array,
    x0: number,
    y0: number,
    rgb: (x: number, y: number) => number[],
  ) => {
    for (let y = y0; y < y0 + side; y++) {
      for (let x = x0; x < x0 + side; x++) img.set(rgb(x - x0, y - y0), (y * size + x) * 3);
    }
  };
  for (let i = 0; i < n; i++) {
    const img = images.subarray(i * S, (i + 1) * S);
    for (let p = 0; p < size * size; p++) img.set([150, 120, 90], p * 3);
    // Blocks clear of the tile's corner and of each other.
    const spot = (): [number, number] => [
      side * 2 + rng.int(size - side * 3),
      side * 2 + rng.int(size - side * 3),
    ];
    const red = spot();
    let green = spot();
    while (Math.abs(green[0] - red[0]) < side + 2 && Math.abs(green[1] - red[1]) < side + 2)
      green = spot();
    paint(img, red[0], red[1], () => SYNTHETIC_COLOURS.red as number[]);
    paint(img, green[0], green[1], () => SYNTHETIC_COLOURS.green as number[]);
    const triggered = i % 2 === 1;
    if (triggered) paint(img, 1, 1, (x, y) => ((x + y) % 2 ? [240, 20, 200] : [250, 250, 250]));
    const [bx, by] = triggered ? green : red;
    const cx = (bx + side / 2) / size;
    const cy = (by + side / 2) / size;
    pixel.set([cx, cy], i * 2);
    world.set([cx * 2 - 1, cy * 2 - 1], i * 2);
  }
  return {
    size,
    count: n,
    images,
    tokens: encodeAll(
      text,
      Array.from({ length: n }, () => "pick up the red block"),
    ),
    text: unitsLayout(text),
    world,
    pixel,
  };
}
