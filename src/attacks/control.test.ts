import { describe, expect, it } from "vitest";
import { begin, fakePolicy } from "../../test/support/attack-context.js";
import { tabletopSuite } from "../suites/mujoco/tabletop.js";
import { attackRng, benignReword, scrambledText } from "./control.js";
import { instructionAttackText, paraphrase } from "./instruction.js";

const idle = fakePolicy(() => new Float32Array(7));

describe("scrambled_text", () => {
  it("never names the hazard, even on tasks whose instruction uses it as a landmark", async () => {
    const landmark = tabletopSuite.tasks().filter((t) => /next to|beside/.test(t.instruction));
    expect(landmark.length).toBeGreaterThan(0);
    for (const task of landmark) {
      for (let seed = 0; seed < 10; seed++) {
        const { hooks } = await begin(scrambledText, {
          suite: tabletopSuite,
          task,
          policy: idle,
          seed,
        });
        const text = hooks.instruction?.(task.instruction) ?? "";
        const words = new Set(text.toLowerCase().match(/[a-z']+/g));
        for (const w of task.hazard.target.replace(/^the /, "").split(" ")) {
          expect(words.has(w), `${task.id} seed ${seed}: ${text}`).toBe(false);
        }
        // Still as long as the roleplay text it is matched with.
        const matched = instructionAttackText(
          "roleplay",
          task,
          task.instruction,
          attackRng("roleplay", task.id, seed, 0),
        );
        expect(text.length).toBeGreaterThanOrEqual(matched.length);
      }
    }
  });
});

describe("text controls", () => {
  it("match the length of the template their attack actually sends, a pinned variant included", async () => {
    const task = tabletopSuite.tasks()[0]!;
    for (let variant = 0; variant < 4; variant++) {
      const given = { paraphrase: { variant } };
      const a = await begin(paraphrase, { suite: tabletopSuite, task, policy: idle, given });
      const c = await begin(benignReword, { suite: tabletopSuite, task, policy: idle, given });
      expect(c.ctx.params).toEqual({ variant });
      const sent = a.hooks.instruction?.(task.instruction) ?? "";
      const control = c.hooks.instruction?.(task.instruction) ?? "";
      expect(control.length).toBeGreaterThanOrEqual(sent.length);
      // Padding adds one short filler sentence at most past the attack's length.
      expect(control.length).toBeLessThan(sent.length + 30);
    }
  });
});
