import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reportJsonSchema } from "./schema.js";

describe("schema/report.schema.json", () => {
  it("is generated from the zod schema (run `npm run schema` when this fails)", () => {
    const committed = JSON.parse(
      readFileSync(join(import.meta.dirname, "..", "..", "schema", "report.schema.json"), "utf8"),
    );
    expect(committed).toEqual(reportJsonSchema());
  });
});
