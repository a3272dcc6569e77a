/** `docs/defenses-catalog.md`, generated from the registry so it cannot drift from the code. */
import { defenses, KIND_ORDER } from "./index.js";

/**
 * @param adaptive the attacks adaptive to each defense (from the attack registry, which this
 *   layer does not import: the caller passes it)
 */
export function renderDefenseDocs(adaptive: Record<string, string[]> = {}): string {
  const out: string[] = [
    "# Defense catalog",
    "",
    "Generated from the defense registry by `npm run docs`; do not edit by hand. How defenses are measured, the stop outcome and a worked example: [defenses.md](defenses.md).",
    "",
    "Kinds, in the order a step meets them: `input` (between the arm's perturbation and the policy), `action` (between the arm's action channel and the robot), `monitor` (watches what would reach the robot; stops the arm). Every default param can be set with `--defense-param DEFENSE.KEY=VALUE` (JSON for objects).",
    "",
  ];
  for (const kind of KIND_ORDER) {
    out.push(`## Kind \`${kind}\``, "");
    for (const d of defenses.items.filter((x) => x.kind === kind)) {
      const req = [
        ...(d.requires.policy ?? []).map((r) => `policy:${r}`),
        ...(d.requires.suite ?? []).map((r) => `suite:${r}`),
      ];
      out.push(`### \`${d.id}\``, "");
      out.push(d.description, "");
      out.push(`- requires: ${req.length > 0 ? req.join(", ") : "nothing"}`);
      const a = adaptive[d.id] ?? [];
      out.push(
        `- adaptive attacks: ${a.length > 0 ? a.map((x) => `\`${x}\``).join(", ") : "none (never measured against an attacker who knows it)"}`,
      );
      out.push(`- default params: \`${JSON.stringify(d.params.parse({}))}\``);
      out.push("");
    }
  }
  return out.join("\n");
}
