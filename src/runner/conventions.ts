/**
 * The convention probe (`provael attack --probe-conventions`): a served policy's port can be
 * wrong in ways that look like incompetence (images upside down, the gripper's sign reversed),
 * and a red-team of a policy that never does its task measures nothing. The probe plays the
 * benign arm once per candidate convention, each a variant of the client's key layout written to
 * a file in the run directory, and reports clean task success per variant (Wilson intervals),
 * best first, with the layout that selects the best.
 *
 * Probed: the layout as given; every image rotated by 180°; the gripper's sign flipped; both.
 * Vertical or horizontal flips alone and absolute against delta actions are not probed: a layout
 * cannot express them.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { resolveLayout } from "../policies/served/layout/file.js";
import type { Layout } from "../policies/served/layout/presets.js";
import { RUN_FILES, writeFileAtomic } from "../rundir/files.js";
import type { Rate } from "../stats/rate.js";
import { type RunOptions, runAttack } from "./run.js";

/** The layout each served client uses when `--layout` is not given. */
const DEFAULT_LAYOUT: Record<string, string> = {
  openpi: "libero",
  openvla: "openvla",
  "vla-eval": "vla-eval",
};

const GRIPPER = 6;

export interface ConventionVariant {
  id: string;
  label: string;
  rotate: boolean;
  gripperFlip: boolean;
}

export const CONVENTION_VARIANTS: readonly ConventionVariant[] = [
  { id: "as-given", label: "as given", rotate: false, gripperFlip: false },
  { id: "rotate180", label: "images rotated 180°", rotate: true, gripperFlip: false },
  { id: "gripper-flip", label: "gripper sign flipped", rotate: false, gripperFlip: true },
  { id: "rotate180-gripper-flip", label: "both", rotate: true, gripperFlip: true },
];

export interface ProbeRow {
  variant: ConventionVariant;
  /** The layout file that plays this variant (pass it as --layout). */
  layout: string;
  cleanSuccess: Rate;
  errors: number;
}

export interface ProbeResult {
  base: string;
  rows: ProbeRow[];
  /** The best variant: most clean successes, the layout as given on a tie. */
  best: ProbeRow;
}

/** The layout of a variant, as the mapping file format writes it (docs/served-policies.md). */
export function variantLayoutFile(layout: Layout, v: ConventionVariant): Record<string, unknown> {
  const images = layout.images.map((i) => ({
    key: i.key,
    camera: i.camera,
    size: i.size,
    rotate180: v.rotate ? !i.rotate180 : i.rotate180,
    format: i.format,
    resize: i.resize,
    missing: i.missing,
  }));
  const scale = layout.actions.scale.map((s, d) => (v.gripperFlip && d === GRIPPER ? -s : s));
  const offset = layout.actions.offset.map((o, d) => (v.gripperFlip && d === GRIPPER ? -o : o));
  return {
    images,
    state: layout.state.map((s) => ({
      key: s.key,
      indices: s.indices,
      dtype: s.dtype,
      pad: s.pad,
      scalar: s.scalar,
    })),
    prompt: layout.prompt,
    context: layout.context,
    constants: JSON.parse(JSON.stringify(layout.constants)),
    actions: {
      key: layout.actions.key,
      dim: layout.actions.dim,
      select: layout.actions.select,
      scale,
      offset,
    },
    episode_keys: layout.episodeKeys,
    replan: layout.replan,
  };
}

/** The layout a run's policy options name, or why the policy has none to probe. */
export function probedLayout(policy: string, extra: Record<string, unknown>): string {
  const given = extra.layout;
  if (typeof given === "string") return given;
  const preset = DEFAULT_LAYOUT[policy];
  if (preset === undefined)
    throw new ProvaelError(
      "config/invalid",
      `--probe-conventions probes a served policy's key layout; '${policy}' has none`,
      { hint: "probe a served policy (--policy openpi, openvla or vla-eval, with --layout)" },
    );
  return preset;
}

/** What one variant's benign episodes gave. */
export interface VariantOutcome {
  cleanSuccess: Rate;
  errors: number;
}

/**
 * The probe, whoever plays the episodes: writes each variant's layout file under `<out>/probe/`,
 * has `play` run the benign arm with it into `<out>/probe/<variant>`, and writes
 * `<out>/probe/probe.json`, best first.
 */
export async function probeVariants(
  policy: string,
  extra: Record<string, unknown>,
  out: string,
  play: (v: ConventionVariant, layoutFile: string, dir: string) => Promise<VariantOutcome>,
): Promise<ProbeResult> {
  const baseName = probedLayout(policy, extra);
  const layout = resolveLayout(baseName);
  const dir = join(out, "probe");
  mkdirSync(dir, { recursive: true });
  const rows: ProbeRow[] = [];
  for (const v of CONVENTION_VARIANTS) {
    const file = join(dir, `${v.id}.layout.json`);
    writeFileAtomic(file, `${JSON.stringify(variantLayoutFile(layout, v), null, 2)}\n`);
    const got = await play(v, file, join(dir, v.id));
    rows.push({ variant: v, layout: file, cleanSuccess: got.cleanSuccess, errors: got.errors });
  }
  const ranked = [...rows].sort((a, b) => b.cleanSuccess.successes - a.cleanSuccess.successes);
  const result: ProbeResult = { base: baseName, rows: ranked, best: ranked[0] as ProbeRow };
  writeFileAtomic(
    join(dir, "probe.json"),
    `${JSON.stringify(
      {
        base: baseName,
        variants: ranked.map((r) => ({
          id: r.variant.id,
          label: r.variant.label,
          layout: r.layout,
          clean_success: r.cleanSuccess,
          errors: r.errors,
          run: join("probe", r.variant.id, RUN_FILES.report),
        })),
        best: result.best.variant.id,
      },
      null,
      2,
    )}\n`,
  );
  return result;
}

/**
 * Plays the benign arm under every variant (one run directory each under `<out>/probe/`) and
 * writes `<out>/probe/probe.json`.
 */
export async function probeConventions(
  base: Omit<RunOptions, "out">,
  out: string,
): Promise<ProbeResult> {
  const extra = (base.plan.policy_options.extra ?? {}) as Record<string, unknown>;
  return probeVariants(base.plan.policy, extra, out, async (v, file, dir) => {
    const planExtra = { ...extra, layout: file };
    const { defenses: _defenses, ...plan } = base.plan;
    const result = await runAttack({
      ...base,
      plan: {
        ...plan,
        arms: ["none"],
        attack_params: {},
        policy_options: { ...base.plan.policy_options, extra: planExtra },
      },
      policyOptions: {
        ...base.policyOptions,
        extra: { ...(base.policyOptions.extra ?? {}), layout: file },
      },
      out: dir,
      resume: false,
      finish: { html: false },
    });
    if (!result.report)
      throw new ProvaelError("run/incomplete", `the probe of '${v.label}' stopped`);
    return {
      cleanSuccess: result.report.summary.clean_task_success,
      errors: result.report.arms.none?.errors ?? 0,
    };
  });
}
