// Regenerates docs/attacks.md and docs/defenses-catalog.md from the registries (run after `npm run build`).
import { writeFileSync } from "node:fs";
import { renderAttackDocs } from "../dist/attacks/docs.js";
import { adaptiveAttacks } from "../dist/attacks/index.js";
import { renderDefenseDocs } from "../dist/defenses/docs.js";

writeFileSync(new URL("../docs/attacks.md", import.meta.url), renderAttackDocs());
console.log("wrote docs/attacks.md");
writeFileSync(
  new URL("../docs/defenses-catalog.md", import.meta.url),
  renderDefenseDocs(adaptiveAttacks()),
);
console.log("wrote docs/defenses-catalog.md");
