import type { Command } from "commander";
import { budgetSummary } from "../attacks/budget.js";
import { attacks, resolveAttacks, withMatchedControls } from "../attacks/index.js";
import { profileListings } from "../bridge/profile.js";
import { RECIPES } from "../config/recipes.js";
import { defenses } from "../defenses/index.js";
import { policies } from "../policies/index.js";
import { textTable } from "../report/text.js";
import { suites } from "../suites/index.js";

const print = (json: boolean | undefined, data: unknown, text: () => string) =>
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${text()}\n`);

export function registerList(program: Command): void {
  program
    .command("list-attacks")
    .description("every registered attack with family, role, EAI risk, access and requirements")
    .option("--json", "print JSON")
    .action((flags: { json?: boolean }) => {
      const data = attacks.items.map((a) => {
        const defaults = a.params.parse({}) as Record<string, unknown>;
        return {
          id: a.id,
          family: a.family,
          role: a.role,
          eai: a.eai,
          access: a.access,
          requires: a.requires,
          matches: a.matches ?? null,
          // Controls that match this attack (the reverse of `matches`).
          controls: attacks.items.filter((c) => c.matches === a.id).map((c) => c.id),
          budget: budgetSummary(defaults),
          defaults,
          description: a.description,
        };
      });
      print(flags.json, data, () =>
        textTable(
          [
            "attack",
            "family",
            "role",
            "EAI",
            "access",
            "requires",
            "budget",
            "matches",
            "controls",
            "description",
          ],
          data.map((a) => [
            a.id,
            a.family,
            a.role,
            a.eai ?? "—",
            a.access,
            [
              ...(a.requires.policy ?? []).map((r: string) => `policy:${r}`),
              ...(a.requires.suite ?? []).map((r: string) => `suite:${r}`),
            ].join(",") || "—",
            a.budget,
            a.matches ?? "—",
            a.controls.join(",") || "—",
            a.description,
          ]),
        ),
      );
    });
  program
    .command("list-defenses")
    .description("every registered defense with its kind, requirements and default params")
    .option("--json", "print JSON")
    .action((flags: { json?: boolean }) => {
      const data = defenses.items.map((d) => ({
        id: d.id,
        kind: d.kind,
        requires: d.requires,
        // Attacks declared adaptive to this defense (none: never measured against one).
        adaptive_attacks: attacks.items.filter((a) => a.adaptiveTo === d.id).map((a) => a.id),
        defaults: d.params.parse({}) as Record<string, unknown>,
        description: d.description,
      }));
      print(flags.json, data, () =>
        textTable(
          ["defense", "kind", "requires", "adaptive attacks", "description"],
          data.map((d) => [
            d.id,
            d.kind,
            [
              ...(d.requires.policy ?? []).map((r: string) => `policy:${r}`),
              ...(d.requires.suite ?? []).map((r: string) => `suite:${r}`),
            ].join(",") || "—",
            d.adaptive_attacks.join(",") || "none",
            d.description,
          ]),
        ),
      );
    });
  program
    .command("list-policies")
    .description("every registered policy with its capabilities")
    .option("--json", "print JSON")
    .action((flags: { json?: boolean }) => {
      const data = policies.items.map((p) => ({
        id: p.id,
        description: p.description,
        capabilities: p.capabilities,
        suites: p.suites,
      }));
      print(flags.json, data, () =>
        textTable(
          ["policy", "reads", "action", "suites", "description"],
          data.map((p) => [
            p.id,
            [
              ...p.capabilities.cameras,
              ...(p.capabilities.readsState ? ["state"] : []),
              ...(p.capabilities.privileged ? ["privileged"] : []),
            ].join(",") || "—",
            `${p.capabilities.actionDim}-D×${p.capabilities.chunk}`,
            p.suites.join(",") || "any",
            p.description,
          ]),
        ),
      );
    });
  program
    .command("list-suites")
    .description("every registered suite with its tasks")
    .option("--json", "print JSON")
    .action((flags: { json?: boolean }) => {
      const data = suites.items.map((s) => ({
        id: s.id,
        description: s.description,
        capabilities: s.capabilities,
        tasks: s.tasks().map((t) => ({
          id: t.id,
          instruction: t.instruction,
          scenes: t.scenes,
          horizon: t.horizon,
          hazard: t.hazard.target,
        })),
      }));
      print(flags.json, data, () =>
        data
          .map(
            (s) =>
              `${s.id}: ${s.description}\n${textTable(
                ["task", "instruction", "scenes", "horizon", "hazard"],
                s.tasks.map((t) => [
                  t.id,
                  t.instruction,
                  String(t.scenes),
                  String(t.horizon),
                  t.hazard,
                ]),
              )}`,
          )
          .join("\n\n"),
      );
    });
  program
    .command("list-profiles")
    .description(
      "benchmark profiles for `provael bridge --profile`: pose, cameras, what each judges",
    )
    .option("--json", "print JSON")
    .action((flags: { json?: boolean }) => {
      const data = profileListings();
      print(flags.json, data, () =>
        textTable(
          ["profile", "benchmark", "pose", "judges", "N/A"],
          data.map((p) => [
            p.id,
            p.benchmark.slice(p.benchmark.lastIndexOf(":") + 1),
            p.pose
              ? `${p.pose.field ?? p.pose.key}[${p.pose.slice.join(":")}] ${p.pose.frame}`
              : "none",
            p.judged.map((j) => j.predicate).join(",") || "nothing",
            p.notApplicable.map((n) => n.predicate).join(",") || "—",
          ]),
        ),
      );
    });
  program
    .command("list-recipes")
    .description("named base configurations for `provael attack --recipe`")
    .option("--json", "print JSON")
    .action((flags: { json?: boolean }) => {
      const data = RECIPES.map((r) => ({ ...r, arms: resolveAttacks(r.attacks) }));
      print(flags.json, data, () =>
        textTable(
          ["recipe", "attacks", "seeds", "arms", "description"],
          data.flatMap((r) => [
            [
              r.name,
              r.attacks.join(","),
              String(r.seeds ?? "—"),
              String(withMatchedControls(r.arms).length),
              r.description,
            ],
            // A per-suite override applies to the run that names no attacks and no tasks.
            ...Object.entries(r.suites ?? {}).map(([suite, o]) => {
              const arms = o.attacks ? withMatchedControls(resolveAttacks(o.attacks)) : null;
              return [
                `  on ${suite}`,
                (o.attacks ?? r.attacks).join(","),
                String(o.seeds ?? r.seeds ?? "—"),
                String(arms?.length ?? withMatchedControls(r.arms).length),
                `with no --attacks/--tasks: ${o.tasks ? `${o.tasks.length} tasks (${o.tasks.join(", ")})` : "every task"}`,
              ];
            }),
          ]),
        ),
      );
    });
}
