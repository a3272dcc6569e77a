// Regenerates schema/report.schema.json from the zod schema (run after `npm run build`).
import { writeFileSync } from "node:fs";
import { reportJsonSchema } from "../dist/report/schema.js";

writeFileSync(
  new URL("../schema/report.schema.json", import.meta.url),
  `${JSON.stringify(reportJsonSchema(), null, 2)}\n`,
);
console.log("wrote schema/report.schema.json");
