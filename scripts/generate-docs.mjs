// Regenerates docs/attacks.md from the attack registry (run after `npm run build`).
import { writeFileSync } from "node:fs";
import { renderAttackDocs } from "../dist/attacks/docs.js";

writeFileSync(new URL("../docs/attacks.md", import.meta.url), renderAttackDocs());
console.log("wrote docs/attacks.md");
