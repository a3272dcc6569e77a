/** Key layouts from a user mapping file (YAML or JSON, checked with zod), or a preset by name. */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ProvaelError } from "../../../core/errors.js";
import { describeIssues } from "../../../core/zod-issues.js";
import { fromJson, type WireMap, wireMap } from "../codec/tree.js";
import {
  type ImageSpec,
  identity,
  LAYOUTS,
  type Layout,
  LIBERO,
  OUR_DIM,
  type StateSpec,
} from "./presets.js";

const keyPath = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);
const size = z.union([
  z.number().int().positive(),
  z.tuple([z.number().int().positive(), z.number().int().positive()]),
]);

const imageFile = z
  .object({
    key: keyPath,
    camera: z.string().min(1),
    size: size.nullable().optional(),
    rotate180: z.boolean().optional(),
    format: z.enum(["HWC", "CHW"]).optional(),
    resize: z.enum(["nearest", "bilinear"]).optional(),
    missing: z.enum(["zeros", "skip", "error"]).optional(),
  })
  .strict();

const stateFile = z
  .object({
    key: keyPath,
    indices: z.union([z.literal("all"), z.array(z.number().int().min(0)).min(1)]).optional(),
    dtype: z.enum(["float32", "float64"]).optional(),
    pad: z.number().int().positive().nullable().optional(),
    scalar: z.boolean().optional(),
  })
  .strict();

/** The mapping file format (see docs/served-policies.md). */
export const layoutFileSchema = z
  .object({
    extends: z.enum(["libero", "droid", "aloha", "openvla", "vla-eval"]).optional(),
    images: z.array(imageFile).optional(),
    state: z.array(stateFile).optional(),
    prompt: keyPath.nullable().optional(),
    context: keyPath.nullable().optional(),
    constants: z.record(z.string(), z.unknown()).optional(),
    actions: z
      .object({
        key: z.string().min(1).optional(),
        dim: z.number().int().positive(),
        select: z.array(z.number().int().min(0).nullable()).length(OUR_DIM).optional(),
        scale: z.array(z.number()).length(OUR_DIM).optional(),
        offset: z.array(z.number()).length(OUR_DIM).optional(),
      })
      .strict()
      .optional(),
    episode_keys: z.boolean().optional(),
    replan: z.number().int().positive().optional(),
  })
  .strict();

export type LayoutFile = z.infer<typeof layoutFileSchema>;

const asPath = (k: string | string[]) => (typeof k === "string" ? [k] : k);
const asSize = (s: number | [number, number]): [number, number] =>
  typeof s === "number" ? [s, s] : s;

/** Builds a layout from a parsed mapping file (fields replace the preset's it extends). */
export function layoutFromFile(file: LayoutFile, name: string): Layout {
  const base: Layout = file.extends
    ? (LAYOUTS[file.extends] as Layout)
    : { ...LIBERO, images: [], state: [], prompt: ["prompt"], constants: wireMap(), name };
  const images: ImageSpec[] = file.images
    ? file.images.map((i) => ({
        key: asPath(i.key),
        camera: i.camera,
        size: i.size === undefined ? [224, 224] : i.size === null ? null : asSize(i.size),
        rotate180: i.rotate180 ?? false,
        format: i.format ?? "HWC",
        resize: i.resize ?? "nearest",
        missing: i.missing ?? (i.size === null ? "skip" : "zeros"),
      }))
    : base.images;
  const state: StateSpec[] = file.state
    ? file.state.map((s) => ({
        key: asPath(s.key),
        indices: s.indices ?? "all",
        dtype: s.dtype ?? "float32",
        pad: s.pad ?? null,
        scalar: s.scalar ?? false,
      }))
    : base.state;
  for (const s of state) {
    if (s.scalar && (s.indices === "all" || s.indices.length !== 1))
      throw new ProvaelError(
        "config/invalid",
        `state key ${s.key.join(".")}: scalar needs one index`,
      );
  }
  const a = file.actions;
  const dim = a?.dim ?? base.actions.dim;
  const select = a?.select ?? (a ? identity(Math.min(OUR_DIM, dim)) : base.actions.select);
  while (select.length < OUR_DIM) select.push(null);
  for (const s of select) {
    if (s !== null && s >= dim)
      throw new ProvaelError(
        "config/invalid",
        `actions.select names column ${s} of a ${dim}-column reply`,
      );
  }
  return {
    name,
    images,
    state,
    prompt:
      file.prompt === undefined ? base.prompt : file.prompt === null ? null : asPath(file.prompt),
    context:
      file.context === undefined
        ? base.context
        : file.context === null
          ? null
          : asPath(file.context),
    constants: file.constants ? (fromJson(file.constants) as WireMap) : base.constants,
    actions: {
      key: a?.key ?? base.actions.key,
      dim,
      select,
      scale: a?.scale ?? (a ? new Array(OUR_DIM).fill(1) : base.actions.scale),
      offset: a?.offset ?? (a ? new Array(OUR_DIM).fill(0) : base.actions.offset),
    },
    episodeKeys: file.episode_keys ?? base.episodeKeys,
    replan: file.replan ?? base.replan,
  };
}

/**
 * A preset name or a path to a YAML/JSON mapping file.
 *
 * @example
 *   resolveLayout("libero");
 *   resolveLayout("./my-policy.layout.yaml");
 */
export function resolveLayout(nameOrPath: string): Layout {
  const preset = LAYOUTS[nameOrPath.toLowerCase()];
  if (preset) return preset;
  if (!/\.(ya?ml|json)$/i.test(nameOrPath)) {
    throw new ProvaelError("config/invalid", `unknown layout '${nameOrPath}'`, {
      details: { layout: nameOrPath },
      hint: `use one of ${Object.keys(LAYOUTS).join(", ")} or a .yaml/.json mapping file`,
    });
  }
  let text: string;
  try {
    text = readFileSync(nameOrPath, "utf8");
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read layout file ${nameOrPath}`, { cause: e });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new ProvaelError("io/malformed", `layout file ${nameOrPath} is not YAML or JSON`, {
      cause: e,
    });
  }
  const parsed = layoutFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ProvaelError(
      "config/invalid",
      `layout file ${nameOrPath}: ${describeIssues(parsed.error)}`,
      {
        details: { issues: parsed.error.issues },
        hint: "see docs/served-policies.md for the mapping file format",
      },
    );
  }
  return layoutFromFile(parsed.data, nameOrPath);
}
