/**
 * `provael attack --probe-conventions`: the benign arm under each candidate convention of a
 * served policy's key layout (src/runner/conventions.ts), printed best first with the layout
 * that selects the best. Plays no attack.
 */
import { join } from "node:path";
import type { Command } from "commander";
import { formatRate, textTable } from "../report/format.js";
import { type ProbeResult, probeConventions } from "../runner/conventions.js";
import type { PlanSpec } from "../runner/plan.js";
import type { RunOptions } from "../runner/run.js";

/** Tasks and seeds of the probe: what the command named, else 2 seeds on up to 5 tasks. */
export function probePlan(plan: PlanSpec, command: Command): PlanSpec {
  const named = (k: string) => command.getOptionValueSource(k) === "cli";
  return {
    ...plan,
    tasks: named("tasks") ? plan.tasks : plan.tasks.slice(0, 5),
    seeds: named("seeds") ? plan.seeds : 2,
  };
}

const CHANGE: Record<string, string> = {
  "as-given": "keep the layout as it is",
  rotate180: "flip rotate180 on every image of the layout",
  "gripper-flip": "negate the gripper's actions.scale (and offset), dimension 6",
  "rotate180-gripper-flip": "flip rotate180 on every image and negate the gripper's actions.scale",
};

export async function probeAndPrint(
  options: Omit<RunOptions, "onProgress" | "signal">,
  json: boolean,
): Promise<void> {
  const { out, ...base } = options;
  printProbe(await probeConventions(base, out), out, json);
}

/** The probe's table, best first, with the change that selects the best (or its JSON). */
export function printProbe(r: ProbeResult, out: string, json: boolean): void {
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ out, base: r.base, best: r.best.variant.id, variants: r.rows.map((x) => ({ id: x.variant.id, layout: x.layout, clean_success: x.cleanSuccess, errors: x.errors })) }, null, 2)}\n`,
    );
    return;
  }
  const table = textTable(
    ["convention", "clean task success (95% Wilson)", "errors", "layout"],
    r.rows.map((x) => [x.variant.label, formatRate(x.cleanSuccess), String(x.errors), x.layout]),
  );
  const best = r.best;
  process.stdout.write(
    `convention probe of layout '${r.base}' (benign arm only, ${best.cleanSuccess.n} episodes per convention):\n\n${table}\n\nbest: ${best.variant.label}: ${CHANGE[best.variant.id]}, or pass --layout ${best.layout}\nthe probe's runs and verdict: ${join(out, "probe")}\n`,
  );
}
