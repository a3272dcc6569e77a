/** `docs/attacks.md`, generated from the registry so it cannot drift from the code. */
import { budgetSummary } from "./budget.js";
import { attacks, families } from "./index.js";

export function renderAttackDocs(): string {
  const out: string[] = [
    "# Attack catalog",
    "",
    "Generated from the attack registry by `npm run docs`; do not edit by hand.",
    "",
    "Roles: `baseline` is the benign floor, `control` is a harmless change of matched size (it enters neither the attack rate nor the floor), `treatment` is adversarial. An attack whose requirements the policy or suite does not meet is N/A for the run: excluded from denominators and printed as N/A, never as 0.",
    "",
    "Every treatment has at least one matched control: the attack's mechanism with the adversarial choice removed, at the same size (the same length of text, area of patch, hold length, push strength, sensor error norm, L∞ bound, query budget or bit-flip count, in the same cell). A control's size params are its attack's: `--attack-param freeze.length=[5,5]` sets `random_freeze`'s hold too, unless the control is given its own value.",
    "",
    "Every default param can be set for a run with `--attack-param ARM.KEY=VALUE` (repeatable; fractions such as `32/255` are read as numbers). The values are checked against the attack's schema before anything runs and are recorded in the plan, so a resume with other values is refused. The report's `arms.<arm>.budget_use` and each episode's `budget` say what was spent.",
    "",
  ];
  for (const family of families()) {
    out.push(`## Family \`${family}\``, "");
    for (const a of attacks.items.filter((x) => x.family === family)) {
      const req = [
        ...(a.requires.policy ?? []).map((r) => `policy:${r}`),
        ...(a.requires.suite ?? []).map((r) => `suite:${r}`),
      ];
      out.push(`### \`${a.id}\``, "");
      out.push(a.description, "");
      out.push(`- role: ${a.role}`);
      out.push(`- EAI risk: ${a.eai ?? "none"}`);
      out.push(`- access: ${a.access}`);
      out.push(`- requires: ${req.length > 0 ? req.join(", ") : "nothing"}`);
      if (a.matches) out.push(`- matched control for: \`${a.matches}\``);
      const controls = attacks.items.filter((c) => c.matches === a.id).map((c) => `\`${c.id}\``);
      if (controls.length > 0) out.push(`- matched controls: ${controls.join(", ")}`);
      if (a.noControl) out.push(`- no matched control: ${a.noControl}`);
      if (a.matches && (a.sharedParams ?? []).length > 0)
        out.push(
          `- size from \`${a.matches}\`'s params: ${(a.sharedParams ?? []).map((k) => `\`${k}\``).join(", ")}`,
        );
      const defaults = a.params.parse({}) as Record<string, unknown>;
      out.push(`- default budget: ${budgetSummary(defaults)}`);
      out.push(`- default params: \`${JSON.stringify(defaults)}\``);
      out.push("");
    }
  }
  return out.join("\n");
}
