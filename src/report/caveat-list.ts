/**
 * What limits how far a run's numbers can be read, as one list built from report.json alone:
 * a preliminary run, uncalibrated predicates (with the command that fits them), unjudged and
 * not-delivered episodes, treatments without a matched control, seeds that replayed a scene, and
 * for calibrated tasks the false-positive rate their zones were fitted for and measured at.
 * The terminal, report.md, report.html and the viewer print this same list; only the fix is
 * worded for what made the run (`provael attack`, `provael bridge`, or the library).
 */
import type { Report } from "./build.js";
import { formatRate, pct } from "./format.js";
import { MIN_SEEDS } from "./rate.js";

/**
 * What the caveats need from the plugin registries, as data: `caveats.ts` reads it from the
 * registries; a page without them gets it from the build (src/view/facts.ts).
 */
export interface CaveatFacts {
  /** Per suite: its tasks that give no hazard position (`calibrate` refuses those). */
  blindTasks: Record<string, string[]>;
  /** Registered attacks: the attack each controls for, and why a treatment has no control. */
  attacks: { id: string; matches?: string | undefined; noControl?: string | undefined }[];
  /** Per suite: every task, so that a fix names `--tasks` unless it covers them all. */
  suiteTasks?: Record<string, string[]>;
  /** Registered policies behind a server (`--policy-url`): `calibrate` cannot play them. */
  servedPolicies?: string[];
  /**
   * Per suite: the benign seeds `calibrate` plays at its default target (first seed and count,
   * the most any task of the suite needs), for a served policy's fix, which plays them itself.
   */
  calibrationSeeds?: Record<string, { first: number; seeds: number }>;
}

/** What made the run: decides how a caveat's fix is worded. */
export type Via = "attack" | "bridge" | "library";

export interface Caveat {
  kind:
    | "preliminary"
    | "uncalibrated"
    | "calibrated"
    | "unjudged"
    | "not-delivered"
    | "missing-controls"
    | "repeated-scenes";
  /** One sentence or two: what it is, what it means for the numbers, and the fix. */
  text: string;
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

/** A bridged report was made by `provael bridge`; otherwise the caller says (default: attack). */
export function viaOf(report: Report, via?: Via): Via {
  return report.run.bridge ? "bridge" : (via ?? "attack");
}

/**
 * What made a run, from its execution manifest's `made_by` (a run of `runAttack` records
 * "library"; `provael attack` "attack"; older runs nothing, read as attack).
 */
export function viaOfManifest(manifest: { made_by?: unknown } | null | undefined): Via {
  return manifest?.made_by === "library" ? "library" : "attack";
}

/** Tasks of the run whose suite gives no hazard position: `calibrate` refuses those. */
export function withoutHazard(report: Report, facts: CaveatFacts): string[] {
  const blind = facts.blindTasks[report.run.suite] ?? [];
  return report.run.tasks.filter((t) => blind.includes(t));
}

function uncalibrated(
  report: Report,
  facts: CaveatFacts,
  via: Via,
  dir: string | undefined,
): Caveat | null {
  const tasks = report.run.tasks.filter(
    (t) => (report.calibration[t]?.source ?? "suite-default") === "suite-default",
  );
  if (tasks.length === 0) return null;
  const { policy, suite } = report.run;
  const head = `Uncalibrated predicates on ${tasks.join(", ")}: unsafe is judged by the suite's default predicates, not by keep-out zones fitted to this policy's benign behaviour.`;
  const blind = withoutHazard(report, facts).filter((t) => tasks.includes(t));
  if (blind.length === tasks.length)
    return {
      kind: "uncalibrated",
      text: `${head} They cannot be calibrated: the suite gives no hazard position for ${blind.length === 1 ? "this task" : "these tasks"}.`,
    };
  // Scoped to the run's uncalibrated tasks: without --tasks, calibrate plays every task of the
  // suite (12 × 299 episodes on tabletop for a one-task run).
  const named = facts.suiteTasks?.[suite]?.every((t) => tasks.includes(t))
    ? ""
    : ` --tasks ${tasks.join(",")}`;
  const out = `calib/${policy}-${via === "bridge" ? (report.run.bridge?.profile ?? suite) : suite}`;
  const served =
    report.run.served_model !== undefined || (facts.servedPolicies ?? []).includes(policy);
  const fix =
    via === "bridge"
      ? `fit them from this run's benign episodes with \`provael calibrate --from ${dir ?? "RUN_DIR"} --profile ${report.run.bridge?.profile ?? "PROFILE"} --out ${out}\`, then pass \`--calib ${out}\` to \`provael bridge\``
      : served
        ? servedFix(report, facts, via, tasks, out)
        : via === "library"
          ? `fit them with \`provael calibrate --policy ${policy} --suite ${suite}${named} --out ${out}\`, then pass \`calib: "${out}"\` to \`runAttack\``
          : `fit them with \`provael calibrate --policy ${policy} --suite ${suite}${named} --out ${out}\`, then rerun with \`--calib ${out}\``;
  return { kind: "uncalibrated", text: `${head} To ${fix}.` };
}

/**
 * The fix for a served policy: `calibrate` cannot reach its server, so its benign episodes on
 * the calibration scenes are played as a run (by the command or the call that made this one)
 * and the zones fitted from that run (`calibrate --from`).
 */
function servedFix(
  report: Report,
  facts: CaveatFacts,
  via: Via,
  tasks: readonly string[],
  out: string,
): string {
  const { policy, suite } = report.run;
  const seeds = facts.calibrationSeeds?.[suite];
  const rollouts = `${out}-rollouts`;
  const fit = `fit them with \`provael calibrate --from ${rollouts} --out ${out}\``;
  if (via === "library") {
    const range = seeds ? `seed: ${seeds.first}, seeds: ${seeds.seeds}, ` : "";
    return `play the served policy's benign episodes on the calibration scenes with \`runAttack\` (plan \`{ arms: ["none"], ${range}tasks: [${tasks.map((t) => `"${t}"`).join(", ")}] }\`, \`controls: false\`, \`out: "${rollouts}"\`, the server's url in \`policyOptions\`; \`provael calibrate\` cannot reach a server), ${fit}, then pass \`calib: "${out}"\` to \`runAttack\``;
  }
  const range = seeds ? ` --seed ${seeds.first} --seeds ${seeds.seeds}` : "";
  return `play the served policy's benign episodes on the calibration scenes with \`provael attack --policy ${policy} --policy-url URL --suite ${suite} --tasks ${tasks.join(",")} --attacks none --no-controls${range} --out ${rollouts}\` (\`provael calibrate\` cannot reach a server), ${fit}, then rerun with \`--calib ${out}\``;
}

/**
 * Calibrated tasks: a zone fitted for a 20% false-positive rate reads like a 1% one unless the
 * target and the held-out measurement are said, and so does a zone judged on its own scenes.
 */
function calibratedTasks(report: Report): Caveat | null {
  const parts = report.run.tasks.flatMap((t) => {
    const c = report.calibration[t];
    if (!c || c.target_fpr === undefined || c.measured_fpr === undefined) return [];
    const method = c.measured_fpr.interval
      ? ` (${c.measured_fpr.interval.method} ${Math.round(c.measured_fpr.interval.confidence * 100)}%)`
      : "";
    const overlap =
      c.overlap && c.overlap.scenes > 0
        ? `; ${c.overlap.scenes} of the run's ${c.overlap.of} scenes of it were the calibration's fit or threshold scenes, so unsafe there is judged in-sample`
        : "";
    return [
      `${t} fitted for a ${pct(c.target_fpr)} false-positive rate, measured ${formatRate(c.measured_fpr)}${method} on its held-out scenes${overlap}`,
    ];
  });
  if (parts.length === 0) return null;
  return {
    kind: "calibrated",
    text: `Calibrated keep-out zones: ${parts.join("; ")}. The benign floor holds the zones' own false positives: read it against the measured rate.`,
  };
}

function missingControls(report: Report, facts: CaveatFacts, via: Via): Caveat | null {
  const played = (role: string) =>
    report.run.arms.filter((a) => {
      const arm = report.arms[a];
      return arm?.role === role && arm.episodes - arm.not_applicable > 0;
    });
  const matched = played("control").map((c) => report.arms[c]?.matches);
  const bare = played("treatment").filter((t) => !matched.includes(t));
  if (bare.length === 0) return null;
  const registered = bare.filter((t) => facts.attacks.some((c) => c.matches === t));
  const none = bare.filter((t) => !registered.includes(t));
  // A treatment that declares why no control of its own fits (an adaptive attack: its base
  // attack's control stands for it) says so, rather than looking merely unregistered.
  const reasons = none.flatMap((t) => {
    const why = facts.attacks.find((a) => a.id === t)?.noControl?.trim();
    return why ? [[t, why] as const] : [];
  });
  const unexplained = none.filter((t) => !reasons.some(([r]) => r === t));
  // Name the controls the rerun would add, not the treatments again.
  const controls = facts.attacks
    .filter((c) => c.matches !== undefined && registered.includes(c.matches))
    .map((c) => c.id);
  const add = controls.length === 1 ? "its control" : "the matched controls";
  const fix =
    via === "library"
      ? `; add ${add} (${controls.join(", ")}) to the plan's arms`
      : via === "bridge"
        ? `; add ${add} (${controls.join(", ")}) to the arms: \`provael bridge --attacks\` serves only the arms it names, and \`provael attack --suite vla-eval\` adds them unless --no-controls`
        : `; rerun without --no-controls to add ${add} (${controls.join(", ")})`;
  return {
    kind: "missing-controls",
    text: `No matched control ran for ${bare.join(", ")}: nothing here shows whether a harmless change of the same size does as much${[
      registered.length > 0 ? fix : "",
      ...reasons.map(([t, why]) => `; for ${t}, ${why}`),
      unexplained.length > 0 ? `; no control is registered for ${unexplained.join(", ")}` : "",
    ].join("")}.`,
  };
}

/** Arms with episodes of one kind, as "roleplay 3, none 3". */
function perArm(report: Report, n: (arm: Report["arms"][string]) => number): [number, string] {
  const parts = report.run.arms.flatMap((a) => {
    const arm = report.arms[a];
    const k = arm ? n(arm) : 0;
    return k > 0 ? [`${a} ${k}`] : [];
  });
  const total = report.run.arms.reduce((s, a) => s + (report.arms[a] ? n(report.arms[a]) : 0), 0);
  return [total, parts.join(", ")];
}

/** Seeds that played a scene another seed of the same task already played. */
function repeatedScenes(report: Report): Caveat | null {
  const first = report.run.arms[0];
  const lines = report.run.tasks.flatMap((task) => {
    const eps = report.episodes.filter((e) => e.arm === first && e.task === task);
    const seeds = new Set(eps.map((e) => e.seed)).size;
    const scenes = new Set(eps.map((e) => e.scene)).size;
    return scenes < seeds ? [`${task} (${seeds} seeds on ${scenes} scenes)`] : [];
  });
  if (lines.length === 0) return null;
  return {
    kind: "repeated-scenes",
    text: `Repeated scenes: some seeds replayed a scene another seed had played, on ${lines.join(", ")}; those episodes are not independent draws, so the intervals are narrower than the scenes support. Play fewer seeds, or a suite with more scenes.`,
  };
}

/**
 * The caveats of a run, in a fixed order. `via` words the fixes (a bridged report is always
 * worded for `bridge`); `dir` is the run directory, where a fix names it.
 */
export function caveatsWith(
  report: Report,
  facts: CaveatFacts,
  options: { via?: Via; dir?: string } = {},
): Caveat[] {
  const via = viaOf(report, options.via);
  const out: (Caveat | null)[] = [];
  if (report.summary.preliminary)
    out.push({
      kind: "preliminary",
      text: `Preliminary: ${count(report.run.seeds, "seed")} ran, fewer than ${MIN_SEEDS}; read the intervals, not the point estimates.`,
    });
  out.push(uncalibrated(report, facts, via, options.dir));
  out.push(calibratedTasks(report));
  const [unjudged, unjudgedArms] = perArm(report, (a) => a.unjudged);
  if (unjudged > 0)
    out.push({
      kind: "unjudged",
      text: `${count(unjudged, "episode")} unjudged (no pose reported, so no predicate could decide): ${unjudgedArms}. They are left out of every rate.`,
    });
  const [undelivered, undeliveredArms] = perArm(report, (a) =>
    a.role === "baseline" ? 0 : a.not_delivered,
  );
  if (undelivered > 0)
    out.push({
      kind: "not-delivered",
      text: `${count(undelivered, "episode")} not delivered (the perturbation never reached the policy): ${undeliveredArms}. They are left out of every rate.`,
    });
  out.push(missingControls(report, facts, via));
  out.push(repeatedScenes(report));
  return out.filter((c): c is Caveat => c !== null);
}
