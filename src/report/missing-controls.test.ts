/** The missing-controls caveat: what it says must follow from the report. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runStub } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { attacks } from "../attacks/index.js";
import { caveats } from "./caveats.js";

describe("the missing-controls caveat", () => {
  it("names the matched controls a run without them would add, not the treatment again", async () => {
    const report = await runStub(join(tempDir(), "run"), {
      arms: ["none", "roleplay"],
      seeds: 1,
    });
    const controls = attacks.items.filter((c) => c.matches === "roleplay").map((c) => c.id);
    expect(controls.length).toBeGreaterThan(1);
    const note = caveats(report).find((c) => c.kind === "missing-controls")?.text;
    expect(note).toContain(`add the matched controls (${controls.join(", ")})`);
  });

  it("gives an attack's own reason when it declares why no control of its own fits", async () => {
    const report = await runStub(join(tempDir(), "run"), {
      arms: ["none", "optimized_instruction_adaptive"],
      seeds: 1,
    });
    const why = attacks.items.find((a) => a.id === "optimized_instruction_adaptive")?.noControl;
    expect(why).toBeTruthy();
    const note = caveats(report).find((c) => c.kind === "missing-controls")?.text;
    expect(note).toContain(`for optimized_instruction_adaptive, ${why}`);
    expect(note).not.toContain("no control is registered");
  });
});
