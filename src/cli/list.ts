import type { Command } from "commander";
import { textTable } from "../report/format.js";

const print = (json: boolean | undefined, data: unknown, text: () => string) =>
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${text()}\n`);

/** The width listings fit: the terminal's, else $COLUMNS, else 80 (a pipe or a file). */
function columns(): number {
  const env = Number(process.env.COLUMNS);
  return process.stdout.columns ?? (Number.isInteger(env) && env > 0 ? env : 80);
}

/** Cuts the table's last column so that each line fits `width` (no wrap, an ellipsis instead). */
function fitWidth(table: string, width: number): string {
  return table
    .split("\n")
    .map((l) => (l.length <= width ? l : `${l.slice(0, Math.max(0, width - 1))}…`))
    .join("\n");
}

/** Prose folded at spaces into lines of at most `width` (a word longer than that is cut). */
function wrapProse(text: string, width: number, indent = ""): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/ +/)) {
    const next = line === "" ? word : `${line} ${word}`;
    if (next.length <= width || line === "") line = next;
    else {
      lines.push(line);
      line = `${indent}${word}`;
    }
  }
  lines.push(line);
  return fitWidth(lines.join("\n"), width);
}

/** The footer of a narrowed listing. */
const WIDE_HINT = (command: string) =>
  `every column, whole descriptions: provael ${command} --wide`;

/**
 * A table fitted to the terminal, or whole with --wide. Narrow, it keeps the columns `narrow`
 * names (in that order; the last one is cut at the edge) and a footer says how to see the rest.
 */
function fittedTable(
  flags: { wide?: boolean },
  header: string[],
  rows: string[][],
  command: string,
  narrow?: readonly number[],
) {
  if (flags.wide) return textTable(header, rows);
  const keep = (r: string[]) => (narrow ? narrow.map((i) => r[i] ?? "") : r);
  const table = textTable(keep(header), rows.map(keep));
  const width = columns();
  return `${fitWidth(table, width)}\n\n${wrapProse(WIDE_HINT(command), width, "  ")}`;
}

const WIDE =
  "every column and the whole description, however wide (default: lines fit the terminal)";

export function registerListAttacks(program: Command): void {
  program
    .command("list-attacks")
    .argument("[ids...]", "attacks to describe in full (requirements, budget, controls, defaults)")
    .option("--json", "print JSON")
    .option("--wide", WIDE)
    .action(async (ids: string[], flags: { json?: boolean; wide?: boolean }) => {
      const [{ attacks }, { budgetSummary }] = await Promise.all([
        import("../attacks/index.js"),
        import("../attacks/budget.js"),
      ]);
      // Unknown ids are refused with the registry's did-you-mean before anything is printed.
      const chosen = ids.length > 0 ? ids.map((id) => attacks.get(id)) : attacks.items;
      const data = chosen.map((a) => {
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
      const requires = (a: (typeof data)[number]) =>
        [
          ...(a.requires.policy ?? []).map((r: string) => `policy:${r}`),
          ...(a.requires.suite ?? []).map((r: string) => `suite:${r}`),
        ].join(",") || "—";
      print(flags.json, data, () => {
        if (ids.length > 0)
          return data
            .map((a) =>
              [
                `${a.id}: ${a.family}, ${a.role}, ${a.eai ?? "no EAI tag"}, access ${a.access}`,
                `  ${a.description}`,
                `  requires: ${requires(a)}`,
                `  budget:   ${a.budget}`,
                `  matches:  ${a.matches ?? "—"}`,
                `  controls: ${a.controls.join(", ") || "—"}`,
                `  defaults: ${JSON.stringify(a.defaults)}`,
              ].join("\n"),
            )
            .join("\n\n");
        if (flags.wide)
          return textTable(
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
              requires(a),
              a.budget,
              a.matches ?? "—",
              a.controls.join(",") || "—",
              a.description,
            ]),
          );
        const width = columns();
        const columnsOf = (a: (typeof data)[number]) => [a.id, a.family, a.role, a.access];
        const bare = textTable(["attack", "family", "role", "access"], data.map(columnsOf));
        // The description only where a readable part of it fits (80 columns leave none).
        const room = width - 2 - Math.max(...bare.split("\n").map((l) => l.length));
        const table =
          room < 24
            ? bare
            : textTable(
                ["attack", "family", "role", "access", "description"],
                data.map((a) => [...columnsOf(a), a.description]),
              );
        return `${fitWidth(table, width)}\n\n${wrapProse("in full (requirements, budget, controls): provael list-attacks ID", width, "  ")}\n${wrapProse("every column: provael list-attacks --wide", width, "  ")}`;
      });
    });
}

export function registerListDefenses(program: Command): void {
  program
    .command("list-defenses")
    .option("--json", "print JSON")
    .option("--wide", WIDE)
    .action(async (flags: { json?: boolean; wide?: boolean }) => {
      const [{ attacks }, { defenses }] = await Promise.all([
        import("../attacks/index.js"),
        import("../defenses/index.js"),
      ]);
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
        fittedTable(
          flags,
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
          "list-defenses",
          // Narrow, the adaptive attacks are left to --wide: the description needs the room.
          [0, 1, 2, 4],
        ),
      );
    });
}

export function registerListPolicies(program: Command): void {
  program
    .command("list-policies")
    .option("--json", "print JSON")
    .option("--wide", WIDE)
    .action(async (flags: { json?: boolean; wide?: boolean }) => {
      const { policies } = await import("../policies/index.js");
      const data = policies.items.map((p) => ({
        id: p.id,
        description: p.description,
        capabilities: p.capabilities,
        suites: p.suites,
      }));
      const reads = (p: (typeof data)[number]) =>
        [
          ...p.capabilities.cameras,
          ...(p.capabilities.readsState ? ["state"] : []),
          ...(p.capabilities.privileged ? ["privileged"] : []),
        ].join(",") || "—";
      // Narrow, what a policy reads is left to --wide: the description needs the room.
      const header = [
        "policy",
        ...(flags.wide ? ["reads"] : []),
        "action",
        "suites",
        "description",
      ];
      print(flags.json, data, () =>
        fittedTable(
          flags,
          header,
          data.map((p) => [
            p.id,
            ...(flags.wide ? [reads(p)] : []),
            `${p.capabilities.actionDim}-D×${p.capabilities.chunk}`,
            p.suites.join(",") || "any",
            p.description,
          ]),
          "list-policies",
        ),
      );
    });
}

export function registerListSuites(program: Command): void {
  program
    .command("list-suites")
    .option("--json", "print JSON")
    .option("--wide", WIDE)
    .action(async (flags: { json?: boolean; wide?: boolean }) => {
      const { suites } = await import("../suites/index.js");
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
      print(flags.json, data, () => {
        const width = flags.wide ? Number.POSITIVE_INFINITY : columns();
        // Narrow, the hazard comes before the instruction: the column cut is the last one.
        const header = flags.wide
          ? ["task", "instruction", "scenes", "horizon", "hazard"]
          : ["task", "scenes", "horizon", "hazard", "instruction"];
        const row = (t: (typeof data)[number]["tasks"][number]) => {
          const cells = [t.id, t.instruction, String(t.scenes), String(t.horizon), t.hazard];
          return flags.wide ? cells : [t.id, cells[2], cells[3], t.hazard, t.instruction];
        };
        const listed = data
          .map(
            (s) =>
              `${wrapProse(`${s.id}: ${s.description}`, width, "  ")}\n${fitWidth(
                textTable(
                  header,
                  s.tasks.map((t) => row(t) as string[]),
                ),
                width,
              )}`,
          )
          .join("\n\n");
        return flags.wide
          ? listed
          : `${listed}\n\n${wrapProse(WIDE_HINT("list-suites"), width, "  ")}`;
      });
    });
}

export function registerListProfiles(program: Command): void {
  program
    .command("list-profiles")
    .argument(
      "[ids...]",
      "profiles to describe in full (cameras, task fields, why each check is or is not judged)",
    )
    .option("--json", "print JSON")
    .option("--wide", WIDE)
    .action(async (ids: string[], flags: { json?: boolean; wide?: boolean }) => {
      const [{ profileListings }, { BUILTIN_PROFILES }, { unknownName }] = await Promise.all([
        import("../bridge/profile.js"),
        import("../bridge/profile.js"),
        import("../core/registry.js"),
      ]);
      const all = profileListings();
      // Unknown ids are refused with the closest names before anything is printed.
      const data =
        ids.length > 0
          ? ids.map(
              (id) =>
                all.find((p) => p.id === id) ??
                (() => {
                  throw unknownName(
                    "benchmark profile",
                    id,
                    BUILTIN_PROFILES,
                    "provael list-profiles",
                    "config/invalid",
                  );
                })(),
            )
          : all;
      const pose = (p: (typeof data)[number]) =>
        p.pose
          ? `${p.pose.field ?? p.pose.key}[${p.pose.slice.join(":")}] ${p.pose.frame}`
          : "none";
      const judges = (p: (typeof data)[number]) =>
        p.judged.map((j) => j.predicate).join(",") || "nothing";
      print(flags.json, data, () => {
        if (ids.length > 0)
          return data
            .map((p) =>
              [
                `${p.id}: ${p.benchmark}${p.extends ? ` (extends ${p.extends})` : ""}`,
                `  ${p.description}`,
                `  pose:     ${pose(p)}`,
                `  cameras:  ${p.cameras.join(", ") || "—"}`,
                `  task:     ${p.taskFields.join(", ") || "—"}`,
                ...(p.accepts.length > 0 ? [`  accepts:  ${p.accepts.join(", ")}`] : []),
                ...p.judged.map((j) => `  judges ${j.predicate}${j.when ? `: ${j.when}` : ""}`),
                ...p.notApplicable.map((n) => `  N/A ${n.predicate}: ${n.reason}`),
              ].join("\n"),
            )
            .join("\n\n");
        const short = (b: string) => b.slice(b.lastIndexOf(":") + 1);
        if (flags.wide)
          return textTable(
            ["profile", "benchmark", "pose", "judges", "N/A"],
            data.map((p) => [
              p.id,
              short(p.benchmark),
              pose(p),
              judges(p),
              p.notApplicable.map((n) => n.predicate).join(",") || "—",
            ]),
          );
        // What is not judged is the rest of the three checks: the detail view says why.
        const table = textTable(
          ["profile", "benchmark", "judges", "pose"],
          data.map((p) => [p.id, short(p.benchmark), judges(p), pose(p)]),
        );
        const width = columns();
        return `${fitWidth(table, width)}\n\n${wrapProse("in full: provael list-profiles ID; every column: --wide", width, "  ")}`;
      });
    });
}

export function registerListRecipes(program: Command): void {
  program
    .command("list-recipes")
    .option("--json", "print JSON")
    .option("--wide", WIDE)
    .action(async (flags: { json?: boolean; wide?: boolean }) => {
      const [{ resolveAttacks, withMatchedControls }, { RECIPES }] = await Promise.all([
        import("../attacks/index.js"),
        import("../config/recipes.js"),
      ]);
      const data = RECIPES.map((r) => ({ ...r, arms: resolveAttacks(r.attacks) }));
      print(flags.json, data, () =>
        fittedTable(
          flags,
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
          "list-recipes",
          [0, 2, 3, 1, 4],
        ),
      );
    });
}
