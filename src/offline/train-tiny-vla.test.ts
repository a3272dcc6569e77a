import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { fixedClock } from "../core/clock.js";
import { stubPolicy } from "../policies/stub.js";
import { TinyVlaRuntime } from "../policies/tiny-vla/runtime.js";
import { SubwordEncoder } from "../policies/tiny-vla/subword.js";
import { DEFAULT_SUBWORD } from "../policies/tiny-vla/text-encoders.js";
import { loadWeights } from "../policies/tiny-vla/weights.js";
import { stubSuite } from "../suites/stub.js";
import { recordDemonstrations } from "./record.js";
import { trainTinyVlaFromDatasets } from "./train-tiny-vla.js";

const MODEL = {
  cameras: ["agentview"],
  imageSize: 16,
  patch: 8,
  dim: 8,
  textDim: 8,
  keypoints: 2,
  pooled: 4,
  hidden: [16],
  stateFeatures: "raw" as const,
  // The stub world's state: the gripper and six objects along a rail.
  stateDim: 7,
};

describe("training tiny-vla from demonstrations", () => {
  it("records the chosen text units in the manifest; fine-tuning keeps them", async () => {
    const root = tempDir();
    const data = join(root, "demos");
    await recordDemonstrations({
      suite: stubSuite,
      policy: stubPolicy,
      tasks: stubSuite
        .tasks()
        .slice(0, 2)
        .map((t) => t.id),
      scenes: [1, 2],
      episodes: 2,
      seed: 0,
      out: data,
    });
    const train = (out: string, extra: object) =>
      trainTinyVlaFromDatasets({
        data: [data],
        out: join(root, out),
        seed: 0,
        steps: 2,
        batchSize: 4,
        model: MODEL,
        clock: fixedClock(),
        ...extra,
      });

    await train("words", {});
    const words = JSON.parse(readFileSync(join(root, "words", "manifest.json"), "utf8"));
    expect(words.tokenizer.vocabulary).toContain("cup");
    expect(words.textUnits).toBeUndefined();

    await train("subword", { textUnits: "subword" });
    const loaded = loadWeights(join(root, "subword"));
    expect(loaded.manifest.textUnits).toEqual({ kind: "subword", ...DEFAULT_SUBWORD });
    expect(loaded.manifest.tokenizer).toBeUndefined();
    expect(loaded.text).toBeInstanceOf(SubwordEncoder);
    expect(loaded.config.vocabSize).toBe(DEFAULT_SUBWORD.buckets);
    expect(loaded.manifest.training.text_units).toBe("subword");
    const rt = await TinyVlaRuntime.create(loaded);
    const raw = rt.raw({
      images: {
        agentview: { width: 16, height: 16, channels: 3, data: new Uint8Array(16 * 16 * 3) },
      },
      state: new Float32Array(loaded.config.stateDim),
      instruction: "move towards the cups",
    });
    expect(Array.from(raw.move).every(Number.isFinite)).toBe(true);
    rt.dispose();

    await train("tuned", { initFrom: join(root, "subword") });
    expect(loadWeights(join(root, "tuned")).manifest.textUnits).toEqual(loaded.manifest.textUnits);
    await expect(
      train("mixed", { initFrom: join(root, "subword"), textUnits: "words" }),
    ).rejects.toThrow(/reads subword text units, not words/);
  });
});
