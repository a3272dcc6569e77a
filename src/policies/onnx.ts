/**
 * `onnx`: bring your own model. An exported ONNX model runs in-process on onnxruntime-node (CPU);
 * an io-map (YAML or JSON, checked with zod) says which observation fields feed which inputs and
 * how the output becomes our 7-D action or a chunk of them:
 *
 *   provael attack --policy onnx --policy-path model.onnx --io-map map.yaml
 *
 * Text reaches a model as a hashed bag of words (FNV-1a 32-bit of each lower-case word, modulo
 * the vector size) or as hashed token ids, so a model trained with the same hash reads it;
 * docs/served-policies.md has the exact recipe.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { definePolicy } from "../core/registry.js";
import type {
  Action,
  Image,
  Observation,
  PolicyCapabilities,
  PolicyInstance,
  PolicyOptions,
} from "../core/types.js";
import { describeIssues } from "../core/zod-issues.js";
import { transform } from "./served/image.js";

const OUR_DIM = 7;
const name = z.string().min(1);
const size = z.union([
  z.number().int().positive(),
  z.tuple([z.number().int().positive(), z.number().int().positive()]),
]);

const imageInput = z
  .object({
    name,
    from: z.literal("image"),
    camera: z.string().min(1),
    /** [width, height] the model reads; omitted: the camera's own size. */
    size: size.optional(),
    layout: z.enum(["NCHW", "NHWC"]).default("NCHW"),
    dtype: z.enum(["float32", "uint8"]).default("float32"),
    /** value = (pixel * scale + offset - mean[c]) / std[c] */
    scale: z.number().default(1 / 255),
    offset: z.number().default(0),
    mean: z.array(z.number()).optional(),
    std: z.array(z.number()).optional(),
    resize: z.enum(["nearest", "bilinear"]).default("bilinear"),
    rotate180: z.boolean().default(false),
  })
  .strict();

const stateInput = z
  .object({
    name,
    from: z.literal("state"),
    indices: z.union([z.literal("all"), z.array(z.number().int().min(0)).min(1)]).default("all"),
    dtype: z.enum(["float32", "float64"]).default("float32"),
    /** Shape fed to the model; default [1, n]. */
    shape: z.array(z.number().int().positive()).optional(),
  })
  .strict();

const textInput = z
  .object({
    name,
    from: z.literal("text"),
    encoding: z.enum(["hashed-bow", "hashed-ids"]),
    /** hashed-bow: vector size. */
    dim: z.number().int().positive().optional(),
    /** hashed-ids: sequence length and vocabulary size (id 0 is padding). */
    length: z.number().int().positive().optional(),
    vocab: z.number().int().min(2).optional(),
    normalize: z.enum(["none", "l2"]).default("none"),
  })
  .strict()
  .refine(
    (t) =>
      t.encoding === "hashed-bow"
        ? t.dim !== undefined
        : t.length !== undefined && t.vocab !== undefined,
    {
      message: "hashed-bow needs dim; hashed-ids needs length and vocab",
    },
  );

const constantInput = z
  .object({
    name,
    from: z.literal("constant"),
    value: z.union([z.number(), z.array(z.number())]),
    shape: z.array(z.number().int().positive()),
    dtype: z.enum(["float32", "int64"]).default("float32"),
  })
  .strict();

/** The io-map file format (see docs/served-policies.md, "Bring your own model"). */
export const ioMapSchema = z
  .object({
    inputs: z.array(z.union([imageInput, stateInput, textInput, constantInput])).min(1),
    output: z
      .object({
        /** Output name; default: the model's first output. */
        name: name.optional(),
        /** action: (1, D) or (D,); chunk: (1, H, D) or (H, D). */
        kind: z.enum(["action", "chunk"]).default("action"),
        select: z.array(z.number().int().min(0).nullable()).length(OUR_DIM).optional(),
        scale: z.array(z.number()).length(OUR_DIM).optional(),
        offset: z.array(z.number()).length(OUR_DIM).optional(),
        clip: z.tuple([z.number(), z.number()]).optional(),
      })
      .strict()
      .default({ kind: "action" }),
    /** Actions executed from each chunk before the model runs again. */
    replan: z.number().int().positive().optional(),
  })
  .strict();

export type IoMap = z.infer<typeof ioMapSchema>;
type Input = IoMap["inputs"][number];

/** FNV-1a, 32-bit, over the UTF-8 bytes of a word. */
export function fnv1a(word: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(word, "utf8")) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * A hashed bag of words: counts of each word's FNV-1a hash modulo `dim`.
 *
 * @example
 *   hashedBagOfWords("pick up the bowl", 32); // Float32Array(32) with four 1s
 */
export function hashedBagOfWords(text: string, dim: number, normalize: "none" | "l2" = "none") {
  const v = new Float32Array(dim);
  for (const w of words(text)) v[fnv1a(w) % dim] = (v[fnv1a(w) % dim] as number) + 1;
  if (normalize === "l2") {
    const n = Math.hypot(...v);
    if (n > 0) for (let i = 0; i < dim; i++) v[i] = (v[i] as number) / n;
  }
  return v;
}

/** Hashed token ids in 1..vocab-1, padded with 0 (or cut) to `length`. */
export function hashedIds(text: string, length: number, vocab: number): BigInt64Array {
  const ids = new BigInt64Array(length);
  words(text)
    .slice(0, length)
    .forEach((w, i) => {
      ids[i] = BigInt((fnv1a(w) % (vocab - 1)) + 1);
    });
  return ids;
}

/** Reads and checks an io-map file. */
export function loadIoMap(path: string): IoMap {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read the io-map ${path}: ${(e as Error).message}`, {
      cause: e,
      hint: "pass --io-map with a YAML or JSON file (see docs/served-policies.md)",
    });
  }
  const parsed = ioMapSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ProvaelError("config/invalid", `io-map ${path}: ${describeIssues(parsed.error)}`, {
      details: { issues: parsed.error.issues },
      hint: "see docs/served-policies.md for the io-map format",
    });
  }
  return parsed.data;
}

type Ort = typeof import("onnxruntime-node");
type Session = Awaited<ReturnType<Ort["InferenceSession"]["create"]>>;
type Tensor = InstanceType<Ort["Tensor"]>;

function imageTensor(ort: Ort, spec: Extract<Input, { from: "image" }>, image: Image): Tensor {
  const [w, h] =
    spec.size === undefined
      ? [image.width, image.height]
      : typeof spec.size === "number"
        ? [spec.size, spec.size]
        : spec.size;
  const im = transform(image, w, h, spec.resize, spec.rotate180 ? "after" : "none");
  const c = im.channels;
  const n = w * h;
  const dims = spec.layout === "NCHW" ? [1, c, h, w] : [1, h, w, c];
  const out = spec.dtype === "uint8" ? new Uint8Array(n * c) : new Float32Array(n * c);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < c; k++) {
      const px = im.data[i * c + k] as number;
      const v =
        spec.dtype === "uint8"
          ? px
          : (px * spec.scale + spec.offset - (spec.mean?.[k] ?? 0)) / (spec.std?.[k] ?? 1);
      out[spec.layout === "NCHW" ? k * n + i : i * c + k] = v;
    }
  }
  return new ort.Tensor(spec.dtype, out, dims);
}

function feeds(ort: Ort, map: IoMap, obs: Observation): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  for (const spec of map.inputs) {
    if (spec.from === "image") {
      const image = obs.images[spec.camera];
      if (!image) {
        throw new ProvaelError(
          "policy/error",
          `the suite has no '${spec.camera}' camera for input '${spec.name}'`,
          {
            hint: "map the input to a camera the suite renders (provael list-suites)",
          },
        );
      }
      out[spec.name] = imageTensor(ort, spec, image);
    } else if (spec.from === "state") {
      const values =
        spec.indices === "all" ? Array.from(obs.state) : spec.indices.map((i) => obs.state[i] ?? 0);
      const data = spec.dtype === "float64" ? Float64Array.from(values) : Float32Array.from(values);
      out[spec.name] = new ort.Tensor(spec.dtype, data, spec.shape ?? [1, values.length]);
    } else if (spec.from === "text") {
      out[spec.name] =
        spec.encoding === "hashed-bow"
          ? new ort.Tensor(
              "float32",
              hashedBagOfWords(obs.instruction, spec.dim as number, spec.normalize),
              [1, spec.dim as number],
            )
          : new ort.Tensor(
              "int64",
              hashedIds(obs.instruction, spec.length as number, spec.vocab as number),
              [1, spec.length as number],
            );
    } else {
      const values = typeof spec.value === "number" ? [spec.value] : spec.value;
      const data =
        spec.dtype === "int64"
          ? BigInt64Array.from(values.map((v) => BigInt(Math.trunc(v))))
          : Float32Array.from(values);
      out[spec.name] = new ort.Tensor(spec.dtype, data, spec.shape);
    }
  }
  return out;
}

/** Our actions from the model's output tensor. */
export function outputActions(
  map: IoMap,
  dims: readonly number[],
  data: ArrayLike<number>,
): Action[] {
  const o = map.output;
  const shape =
    dims[0] === 1 && dims.length === (o.kind === "chunk" ? 3 : 2) ? dims.slice(1) : dims;
  const [h, d] = o.kind === "chunk" ? [shape[0] ?? 0, shape[1] ?? 0] : [1, shape[0] ?? 0];
  const select = o.select ?? Array.from({ length: OUR_DIM }, (_, i) => i);
  const need = Math.max(...select.map((s) => (s ?? -1) + 1));
  if (shape.length !== (o.kind === "chunk" ? 2 : 1) || h < 1 || d < need) {
    throw new ProvaelError(
      "policy/bad-action",
      `model output of shape [${dims.join(", ")}] is not a${o.kind === "chunk" ? " (1, H, D) chunk" : " (1, D) action"} with D >= ${need}`,
      { hint: "set output.kind and output.select in the io-map to match the model" },
    );
  }
  const out: Action[] = [];
  for (let r = 0; r < h; r++) {
    const a = new Float32Array(OUR_DIM);
    for (let i = 0; i < OUR_DIM; i++) {
      const col = select[i];
      let v = col === null || col === undefined ? 0 : Number(data[r * d + col]);
      v = v * (o.scale?.[i] ?? 1) + (o.offset?.[i] ?? 0);
      if (o.clip) v = Math.min(o.clip[1], Math.max(o.clip[0], v));
      a[i] = v;
    }
    out.push(a);
  }
  return out;
}

class OnnxInstance implements PolicyInstance {
  readonly capabilities: PolicyCapabilities;
  private queue: Action[] = [];
  private readonly output: string;
  private readonly replan: number;

  constructor(
    private readonly ort: Ort,
    private readonly session: Session,
    private readonly map: IoMap,
    readonly digest: string,
  ) {
    const cameras = [...new Set(map.inputs.flatMap((i) => (i.from === "image" ? [i.camera] : [])))];
    this.output = map.output.name ?? (session.outputNames[0] as string);
    this.replan = map.replan ?? (map.output.kind === "chunk" ? Number.POSITIVE_INFINITY : 1);
    this.capabilities = {
      cameras,
      readsState: map.inputs.some((i) => i.from === "state"),
      readsContext: false,
      privileged: false,
      actionDim: OUR_DIM,
      chunk: Number.isFinite(this.replan) ? this.replan : 1,
      differentiable: false,
      weights: false,
      stochastic: false,
      actionHead: "regression",
    };
  }

  reset(): void {
    this.queue = [];
  }

  private async predict(obs: Observation): Promise<Action[]> {
    let result: Awaited<ReturnType<Session["run"]>>;
    try {
      result = await this.session.run(feeds(this.ort, this.map, obs));
    } catch (e) {
      if (e instanceof ProvaelError) throw e;
      throw new ProvaelError("policy/error", `the ONNX model failed: ${(e as Error).message}`, {
        cause: e,
        hint: "check the io-map's input names, shapes and dtypes against the model",
      });
    }
    const t = result[this.output] as Tensor | undefined;
    if (!t) throw new ProvaelError("policy/bad-action", `the model has no output '${this.output}'`);
    return outputActions(this.map, t.dims, t.data as ArrayLike<number>);
  }

  async act(obs: Observation): Promise<Action> {
    const queued = this.queue.shift();
    if (queued) return queued;
    const chunk = await this.predict(obs);
    this.queue = chunk.slice(1, this.replan);
    return chunk[0] as Action;
  }

  /** A prediction that leaves the chunk queue alone (search attacks' oracle). */
  async query(obs: Observation): Promise<Action> {
    return (await this.predict(obs))[0] as Action;
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

/** The runtime's package and the version the io-map code is tested with (package.json's peer). */
export const ONNX_RUNTIME = { name: "onnxruntime-node", version: "1.30.0" } as const;

/**
 * onnxruntime-node is an optional peer dependency, imported on first use only: its install
 * script reaches for a download host, so a plain `npm install provael` does not pull it in, and
 * the native runtime costs start-up time every other command would pay.
 */
export async function loadOnnxRuntime(name: string = ONNX_RUNTIME.name): Promise<unknown> {
  try {
    return await import(name);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") throw e;
    throw new ProvaelError(
      "policy/load",
      `policy 'onnx' needs the optional package ${name}, which is not installed`,
      {
        cause: e,
        details: { package: name },
        hint: `install it beside provael: ONNXRUNTIME_NODE_INSTALL=skip npm install ${name}@${ONNX_RUNTIME.version} (the CPU runtime ships in the package; the variable skips its download of CUDA binaries)`,
      },
    );
  }
}

export const onnxPolicy = definePolicy({
  options: ["ioMap"],
  id: "onnx",
  evidence: "served-model",
  description:
    "Your exported ONNX model on onnxruntime (CPU): --policy-path model.onnx --io-map map.yaml",
  capabilities: {
    cameras: [],
    readsState: true,
    readsContext: false,
    privileged: false,
    actionDim: OUR_DIM,
    chunk: 1,
    differentiable: false,
    weights: false,
    stochastic: false,
    actionHead: "regression",
  },
  suites: [],
  concurrent: false,
  async load(options: PolicyOptions): Promise<PolicyInstance> {
    const path = options.path;
    const ioMap = options.extra?.ioMap;
    if (!path || typeof ioMap !== "string") {
      throw new ProvaelError("config/invalid", "policy 'onnx' needs --policy-path and --io-map", {
        hint: "provael attack --policy onnx --policy-path model.onnx --io-map map.yaml",
      });
    }
    // The runtime first: without it, nothing else about the model matters yet.
    // Typed here, not in the signature above, so the published declarations need no onnxruntime.
    const ort = (await loadOnnxRuntime()) as Ort;
    const map = loadIoMap(ioMap);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (e) {
      throw new ProvaelError("io/read", `cannot read the model ${path}`, { cause: e });
    }
    let session: Session;
    try {
      session = await ort.InferenceSession.create(bytes, {
        executionProviders: ["cpu"],
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        executionMode: "sequential",
      });
    } catch (e) {
      throw new ProvaelError(
        "policy/load",
        `onnxruntime cannot load ${path}: ${(e as Error).message}`,
        {
          cause: e,
          hint: "is it an ONNX model? Export with opset 13 or later",
        },
      );
    }
    const missing = map.inputs.map((i) => i.name).filter((n) => !session.inputNames.includes(n));
    const unfed = session.inputNames.filter((n) => !map.inputs.some((i) => i.name === n));
    const output = map.output.name;
    if (
      missing.length > 0 ||
      unfed.length > 0 ||
      (output && !session.outputNames.includes(output))
    ) {
      await session.release();
      throw new ProvaelError(
        "config/invalid",
        `io-map ${ioMap} does not match ${path}: ${[
          missing.length > 0 ? `no model input named ${missing.join(", ")}` : "",
          unfed.length > 0 ? `model inputs ${unfed.join(", ")} are not fed` : "",
          output && !session.outputNames.includes(output) ? `no output named ${output}` : "",
        ]
          .filter(Boolean)
          .join("; ")}`,
        {
          details: { inputs: session.inputNames, outputs: session.outputNames },
          hint: `the model's inputs are ${session.inputNames.join(", ")}; outputs ${session.outputNames.join(", ")}`,
        },
      );
    }
    return new OnnxInstance(ort, session, map, sha256(bytes));
  },
});
