import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it, vi } from "vitest";
import {
  HELD_OUT_ONLY_WORDS,
  heldOutLeaks,
  namesObject,
} from "../../test/support/held-out-grammar.js";
import { writeTabletopDemos } from "../../test/support/tabletop-demos.js";
import { TINY_NET } from "../../test/support/tiny-net.js";
import { tempDir } from "../../test/support/tmp.js";
import { fixedClock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { stubPolicy } from "../policies/stub.js";
import { type GrammarGoal, sayPlace } from "../policies/tiny-vla/grammar.js";
import { TinyVlaRuntime } from "../policies/tiny-vla/runtime.js";
import { SubwordEncoder } from "../policies/tiny-vla/subword.js";
import { DEFAULT_SUBWORD } from "../policies/tiny-vla/text-encoders.js";
import { TRAIN_DEFAULTS } from "../policies/tiny-vla/train.js";
import { loadWeights } from "../policies/tiny-vla/weights.js";
import { triggerRef } from "../suites/mujoco/trigger.js";
import { stubSuite } from "../suites/stub.js";
import { phrasingIds, phrasingNeeds, tabletopGoal } from "./grammar-phrasings.js";
import { mergeLocator } from "./merge-locator.js";
import { recordDemonstrations } from "./record.js";
import { trainTinyVlaFromDatasets } from "./train-tiny-vla.js";

// Every phrasing training draws goes through sayPlace: the spy sees each one, with its split.
vi.mock("../policies/tiny-vla/grammar.js", async (importOriginal) => {
  const grammar = await importOriginal<typeof import("../policies/tiny-vla/grammar.js")>();
  return { ...grammar, sayPlace: vi.fn(grammar.sayPlace) };
});
// And which goal each sample is said for (phrasingIds' goalOf).
vi.mock("./grammar-phrasings.js", async (importOriginal) => {
  const phrasings = await importOriginal<typeof import("./grammar-phrasings.js")>();
  return { ...phrasings, phrasingIds: vi.fn(phrasings.phrasingIds) };
});

const MODEL = {
  ...TINY_NET,
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
    // The manifest says what the training ran with, defaults included (anchor noise was null).
    expect(words.training).toMatchObject({
      batch_size: 4,
      learning_rate: TRAIN_DEFAULTS.learningRate,
      word_dropout: TRAIN_DEFAULTS.wordDropout,
      anchor_noise: TRAIN_DEFAULTS.anchorNoise,
    });

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

describe("training tiny-vla on the grammar's phrasings", () => {
  const EPISODES = [
    { task: "kitchen_red_block", scene: 20 },
    { task: "kitchen_red_block", scene: 20, target: "knife" },
    { task: "kitchen_red_block_by_knife", scene: 21 },
  ];
  const TABLETOP_MODEL = {
    ...TINY_NET,
    auxMode: "anchored" as const,
    auxToHead: true,
    locator: { size: 16, patch: 4, dim: 4, hidden: 8, offset: true },
  };
  const setup = () => {
    const root = tempDir();
    writeTabletopDemos(join(root, "demos"), EPISODES);
    const train = (out: string, extra: object) =>
      trainTinyVlaFromDatasets({
        data: [join(root, "demos")],
        out: join(root, out),
        seed: 0,
        steps: 3,
        batchSize: 8,
        locatorSteps: 2,
        model: TABLETOP_MODEL,
        clock: fixedClock(),
        ...extra,
      });
    return { root, train };
  };

  it("reads every sample with a fresh train-split phrasing naming its episode's object", async () => {
    const { root, train } = setup();
    const said = vi.mocked(sayPlace);
    said.mockClear();
    vi.mocked(phrasingIds).mockClear();
    const first = await train("grammar", { grammar: "train" });
    // Actor: 3 steps x 8 samples; locator: 2 steps x 32 samples (its own batch size).
    expect(said.mock.calls.length).toBe(3 * 8 + 2 * 32);
    const texts = said.mock.results.map((r) => r.value as string);
    expect(new Set(texts).size).toBeGreaterThan(texts.length / 2);
    said.mock.calls.forEach(([goal, split], k) => {
      expect(split).toBe("train");
      expect(heldOutLeaks(texts[k] as string), texts[k]).toEqual([]);
      expect(namesObject(texts[k] as string, goal), texts[k]).toBe(true);
    });
    // The actor's samples come from the three episodes: the red block (twice, once by the knife)
    // and the knife, retargeted; the locator's name every object of the scenes.
    const actor = said.mock.calls.slice(0, 24).map(([g]) => g as GrammarGoal);
    const goals = EPISODES.map((e) => tabletopGoal(e.task, e.target ?? ""));
    for (const g of actor) expect(goals).toContainEqual(g);
    expect(new Set(actor.map((g) => g.object))).toEqual(new Set(["red_block", "knife"]));
    expect(actor.some((g) => g.place === "next to the knife")).toBe(true);
    // Sample by sample (6 frames an episode): each is said for its own episode's goal.
    const goalOf = vi.mocked(phrasingIds).mock.calls[0]?.[1] as (k: number) => GrammarGoal;
    for (let i = 0; i < 18; i++) expect(goalOf(i)).toEqual(goals[Math.floor(i / 6)]);

    const manifest = JSON.parse(readFileSync(join(root, "grammar", "manifest.json"), "utf8"));
    const log = JSON.parse(readFileSync(join(root, "grammar", "training-log.json"), "utf8"));
    expect(manifest.training.grammar).toBe("train");
    expect(log.grammar).toBe("train");
    // Word units hold every word and the longest phrasing, nothing of the held-out grammar.
    const needs = phrasingNeeds(
      [
        ...goals,
        ...["red_block", "yellow_can", "green_box", "blue_ball"].flatMap((o) => [
          tabletopGoal("kitchen_red_block", o === "red_block" ? "" : o),
          tabletopGoal("kitchen_red_block_by_knife", o === "red_block" ? "" : o),
        ]),
      ],
      "train",
    );
    const vocabulary: string[] = manifest.tokenizer.vocabulary;
    expect(vocabulary).toEqual(expect.arrayContaining(needs.words));
    expect(vocabulary.filter((w) => HELD_OUT_ONLY_WORDS.includes(w))).toEqual([]);
    expect(manifest.tokenizer.maxLength).toBe(needs.longest);
    expect(manifest.config.maxTokens).toBe(needs.longest);

    // The phrasings come from the seed: the same seed trains the same weights.
    said.mockClear();
    expect((await train("again", { grammar: "train" })).digest).toBe(first.digest);
    expect(said.mock.results.map((r) => r.value)).toEqual(texts);

    // Subword units hold at least the longest phrasing's words (the default 64 already does).
    await train("subword", { grammar: "train", textUnits: "subword" });
    const sub = loadWeights(join(root, "subword"));
    expect(sub.manifest.textUnits).toEqual({
      kind: "subword",
      ...DEFAULT_SUBWORD,
      maxWords: Math.max(DEFAULT_SUBWORD.maxWords, needs.longest),
    });
    expect(DEFAULT_SUBWORD.maxWords).toBeGreaterThanOrEqual(needs.longest);
    // A fine-tune starts from the initial model's locator: with no locator steps it is kept
    // exactly (a fresh start would be the seeded initialisation), and the manifest says so.
    await train("kept", {
      grammar: "train",
      textUnits: "subword",
      initFrom: join(root, "subword"),
      locatorSteps: 0,
    });
    const kept = loadWeights(join(root, "kept"));
    await train("fresh", { grammar: "train", textUnits: "subword", locatorSteps: 0 });
    const locatorNames = [...sub.weights.keys()].filter((n) => n.startsWith("locator."));
    expect(locatorNames.length).toBeGreaterThan(0);
    for (const name of locatorNames) expect(kept.weights.get(name)).toEqual(sub.weights.get(name));
    const one = locatorNames[0] as string;
    expect(loadWeights(join(root, "fresh")).weights.get(one)).not.toEqual(sub.weights.get(one));
    const locatorOf = (w: typeof kept) =>
      (w.manifest.training as { locator?: { fine_tuned?: boolean } }).locator;
    expect(locatorOf(kept)?.fine_tuned).toBe(true);
    expect(locatorOf(sub)?.fine_tuned).toBeUndefined();
    // Only the actor was fine-tuned (so the check above would see a locator that moved with it),
    // and no locator set was built for it.
    expect(
      [...sub.weights.keys()].some(
        (n) =>
          !n.startsWith("locator.") && !isDeepStrictEqual(kept.weights.get(n), sub.weights.get(n)),
      ),
    ).toBe(true);
    expect(kept.manifest.training.locator).toEqual({
      steps: 0,
      final_loss: null,
      samples: 0,
      fine_tuned: true,
    });
    // Fine-tuning a model that cannot read the longest phrasing whole is refused.
    await train("plain", {});
    await expect(
      train("tuned", { grammar: "train", initFrom: join(root, "plain") }),
    ).rejects.toThrow(
      /reads 16 words of an instruction; the grammar's phrasings of this data run to/,
    );
  });

  it("keeps the recorded instructions for the actor when asked, the locator alone reading the grammar", async () => {
    const { root, train } = setup();
    const said = vi.mocked(sayPlace);
    const opts = { grammar: "train", textUnits: "subword" };
    const both = await train("both", opts);
    said.mockClear();
    const recorded = await train("recorded", { ...opts, actorText: "recorded" });
    // Only the locator's 2 steps x 32 samples drew a phrasing; the actor's 3 x 8 read the data's.
    expect(said.mock.calls.length).toBe(2 * 32);
    expect(recorded.digest).not.toBe(both.digest);
    const a = loadWeights(join(root, "both"));
    const r = loadWeights(join(root, "recorded"));
    expect(r.manifest.training).toMatchObject({ grammar: "train", actor_text: "recorded" });
    expect(a.manifest.training).not.toHaveProperty("actor_text");
    // The locator never reads the actor: its weights are the grammar training's, bit for bit,
    // and only actor weights moved.
    const moved = [...a.weights.keys()].filter(
      (n) => !isDeepStrictEqual(a.weights.get(n), r.weights.get(n)),
    );
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.filter((n) => n.startsWith("locator."))).toEqual([]);
    // So a locator trained with the actor on the grammar joins this actor (what the actor reads
    // is the actor's own recipe), and the join is the one training's bytes.
    await train("locator-only", { ...opts, steps: 1 });
    expect(mergeLocator(join(root, "recorded"), join(root, "locator-only"), join(root, "j"))).toBe(
      recorded.digest,
    );
    // Without the grammar every sample reads its recorded instruction: nothing to choose.
    await expect(train("no-grammar", { actorText: "recorded" })).rejects.toThrow(
      /what the actor reads is a choice only with a grammar/,
    );
  });

  it("trains a locator whose map reads the view, from scratch only, and joins its two halves", async () => {
    const { root, train } = setup();
    const opts = { grammar: "train", textUnits: "subword", locatorMap: "view" };
    const one = await train("view", opts);
    const loaded = loadWeights(join(root, "view"));
    expect(loaded.config.locator?.map).toBe("view");
    // Its weights load: the map's first layer is as wide as the point and the view it reads.
    (await TinyVlaRuntime.create(loaded)).dispose();
    await train("view-locator", { ...opts, steps: 1 });
    // The option is the locator's alone: the actor of a training without it joins this
    // locator as the one training with it, bytes and configuration.
    const { locatorMap: _map, ...words } = opts;
    await train("words-actor", { ...words, locatorSteps: 1 });
    expect(
      mergeLocator(join(root, "words-actor"), join(root, "view-locator"), join(root, "view-j")),
    ).toBe(one.digest);
    expect(loadWeights(join(root, "view-j")).config).toEqual(loaded.config);
    // The other way round, a word-reading locator joined to a view actor reads words.
    await train("view-actor", { ...opts, locatorSteps: 1 });
    await train("words", words);
    await train("words-locator", { ...words, steps: 1 });
    expect(
      mergeLocator(join(root, "view-actor"), join(root, "words-locator"), join(root, "j2")),
    ).toBe(loadWeights(join(root, "words")).digest);
    expect(loadWeights(join(root, "j2")).config.locator?.map).toBeUndefined();
    await expect(
      train("tuned", { ...opts, initFrom: join(root, "words-locator") }),
    ).rejects.toThrow(/only in a training from scratch/);
  });

  it("trains a word-by-word reader (text context) that loads, localises and acts, reproducibly", async () => {
    const { root, train } = setup();
    const opts = {
      grammar: "train",
      textUnits: "subword",
      novelWords: 0.5,
      novelParts: 0.5,
      model: { ...TABLETOP_MODEL, textContext: { hidden: 8, heads: 2 } },
    };
    const first = await train("ctx", opts);
    expect((await train("ctx-again", opts)).digest).toBe(first.digest);
    // The two stages in two trainings, joined: the same bytes (the locator never reads the actor).
    await train("actor-only", { ...opts, locatorSteps: 1 });
    await train("locator-only", { ...opts, steps: 1 });
    const joined = mergeLocator(
      join(root, "actor-only"),
      join(root, "locator-only"),
      join(root, "joined"),
    );
    expect(joined).toBe(first.digest);
    // Not from a fine-tuned locator, nor across seeds.
    await train("tuned", { ...opts, steps: 1, initFrom: join(root, "ctx") });
    expect(() =>
      mergeLocator(join(root, "actor-only"), join(root, "tuned"), join(root, "j2")),
    ).toThrow(/not trained from scratch/);
    // Across seeds: the locator stage draws from its own seed alone, so the locator of a seed-1
    // run joins the seed-0 actor as one command with --locator-seed 1 writes it...
    await train("seed-1", { ...opts, steps: 1, seed: 1 });
    const crossed = await train("loc-seed-1", { ...opts, locatorSeed: 1 });
    expect(mergeLocator(join(root, "actor-only"), join(root, "seed-1"), join(root, "j3"))).toBe(
      crossed.digest,
    );
    const training = (dir: string) => {
      const { merged: _merged, ...rest } = loadWeights(join(root, dir)).manifest.training;
      return rest;
    };
    expect(training("j3")).toEqual(training("loc-seed-1"));
    // ...and another actor seed joins a locator whose seed was named (several actors, one
    // locator): an actor of seed 3 with a locator of seed 3 is the plain seed-3 training.
    await train("actor-seed-3", { ...opts, seed: 3, locatorSteps: 1 });
    const seed3 = await train("seed-3", { ...opts, seed: 3 });
    await train("locator-seed-3", { ...opts, steps: 1, locatorSeed: 3 });
    expect(
      mergeLocator(join(root, "actor-seed-3"), join(root, "locator-seed-3"), join(root, "j7")),
    ).toBe(seed3.digest);
    expect(training("j7")).toEqual(training("seed-3"));
    // A locator of its own seed joins the actor of the run's seed: the bytes of one command
    // with --locator-seed, which keeps the actor and changes the locator only.
    const both = await train("loc-seed", { ...opts, locatorSeed: 3 });
    expect(both.digest).not.toBe(first.digest);
    expect(
      mergeLocator(join(root, "actor-only"), join(root, "locator-seed-3"), join(root, "j5")),
    ).toBe(both.digest);
    const split = (dir: string, locator: boolean) =>
      [...loadWeights(join(root, dir)).weights]
        .filter(([name]) => name.startsWith("locator.") === locator)
        .map(([name, w]) => [name, Array.from(w)]);
    expect(split("loc-seed", false)).toEqual(split("ctx", false));
    expect(split("loc-seed", true)).not.toEqual(split("ctx", true));
    expect(loadWeights(join(root, "loc-seed")).manifest.training.locator).toMatchObject({
      seed: 3,
    });
    expect(loadWeights(join(root, "ctx")).manifest.training.locator).not.toHaveProperty("seed");
    // A locator trained on more scenes than the actor's data: the join declares both halves'.
    await train("locator-wide", { ...opts, steps: 1, locatorScenes: [20, 23] });
    mergeLocator(join(root, "actor-only"), join(root, "locator-wide"), join(root, "j6"));
    expect(loadWeights(join(root, "j6")).manifest.training.scenes).toEqual([
      {
        suite: "tabletop",
        tasks: ["kitchen_red_block", "kitchen_red_block_by_knife"],
        scenes: [[20, 23]],
      },
    ]);
    expect(loadWeights(join(root, "joined")).manifest.training.scenes).toEqual(
      loadWeights(join(root, "actor-only")).manifest.training.scenes,
    );
    await train("other-recipe", { ...opts, steps: 1, novelParts: 0.25 });
    expect(() =>
      mergeLocator(join(root, "actor-only"), join(root, "other-recipe"), join(root, "j4")),
    ).toThrow(/recipes differ in novel_parts/);
    const loaded = loadWeights(join(root, "ctx"));
    expect(loaded.config.textContext).toEqual({ hidden: 8, heads: 2 });
    expect(loaded.manifest.training).toMatchObject({
      grammar: "train",
      novel_words: 0.5,
      novel_parts: 0.5,
    });
    // Made-up words go into grammar phrasings only: without the grammar, refused up front.
    for (const novel of [{ novelWords: 0.5 }, { novelParts: 0.5 }, { novelColours: 0.5 }])
      await expect(train("no-grammar", novel)).rejects.toThrow(
        /made-up words are added to grammar phrasings only/,
      );
    expect(loaded.manifest.weights.map((w: { name: string }) => w.name)).toEqual(
      expect.arrayContaining(["text.attend.w", "locator.ctx.w", "locator.attend.w"]),
    );
    const runtime = await TinyVlaRuntime.create(loaded);
    const size = loaded.config.imageSize;
    const image = (side: number) => ({
      width: side,
      height: side,
      channels: 3 as const,
      data: new Uint8Array(side * side * 3).fill(90),
    });
    const obs = {
      images: { agentview: image(16), wrist: image(size) },
      state: Float32Array.from([0, 0, 1, 3.1, 0, 0, 0.04, 0.04]),
      instruction: "pick up the red block and put it in the basket, and leave the knife alone",
    };
    const anchor = runtime.localise(obs);
    expect(Array.from(anchor).every(Number.isFinite)).toBe(true);
    const chunk = runtime.predict(obs, anchor);
    expect(chunk.length).toBe(loaded.config.chunk * loaded.config.actionDim);
    expect(Array.from(chunk).every(Number.isFinite)).toBe(true);
    runtime.dispose();
  });

  it("fine-tunes the locator alone with --steps 0: the actor's bytes kept, the locator's moved", async () => {
    const { root, train } = setup();
    const opts = { grammar: "train", textUnits: "subword", model: TABLETOP_MODEL };
    await train("base", opts);
    const tuned = await train("loc-tuned", {
      grammar: "train",
      steps: 0,
      locatorSteps: 4,
      initFrom: join(root, "base"),
    });
    expect(tuned.history).toEqual([]);
    const part = (dir: string, locator: boolean) =>
      [...loadWeights(join(root, dir)).weights]
        .filter(([name]) => name.startsWith("locator.") === locator)
        .map(([name, w]) => [name, sha256(Buffer.from(w.buffer, w.byteOffset, w.byteLength))]);
    expect(part("loc-tuned", false)).toEqual(part("base", false));
    expect(part("loc-tuned", true)).not.toEqual(part("base", true));
    const training = loadWeights(join(root, "loc-tuned")).manifest.training;
    expect(training).toMatchObject({ steps: 0, locator: { steps: 4, fine_tuned: true } });
    expect(training.init_from).toBe(loadWeights(join(root, "base")).digest);
    expect(readFileSync(join(root, "loc-tuned", "loss-curve.svg"), "utf8")).toContain(
      "locator fine-tune",
    );
    // Reproducible, as every training is.
    const again = await train("loc-tuned-2", {
      grammar: "train",
      steps: 0,
      locatorSteps: 4,
      initFrom: join(root, "base"),
    });
    expect(again.digest).toBe(tuned.digest);
    // These demonstrations retarget a task to the knife, so the fine-tune's set names it: no warning.
    const warnings: string[] = [];
    await train("loc-tuned-3", {
      grammar: "train",
      steps: 0,
      locatorSteps: 1,
      initFrom: join(root, "base"),
      onWarning: (m: string) => warnings.push(m),
    });
    expect(warnings).toEqual([]);
    // Nothing to keep without an initial model, and nothing to train with both stages at 0.
    await expect(train("no-init", { ...opts, steps: 0 })).rejects.toThrow(
      "--steps 0 keeps the initial model's actor, and there is none without --init",
    );
    await expect(
      train("nothing", { steps: 0, locatorSteps: 0, initFrom: join(root, "base") }),
    ).rejects.toThrow("--steps 0 and --locator-steps 0 train nothing");
    expect(existsSync(join(root, "no-init"))).toBe(false);
  });

  it("warns that a locator trained on data naming no other object forgets the knife, or never learns it", async () => {
    const { root, train } = setup();
    await train("base", { grammar: "train", textUnits: "subword", model: TABLETOP_MODEL });
    writeTabletopDemos(join(root, "plain"), [{ task: "kitchen_red_block", scene: 22 }]);
    const run = async (out: string, extra: object) => {
      const warnings: string[] = [];
      await trainTinyVlaFromDatasets({
        data: [join(root, "plain")],
        out: join(root, out),
        seed: 0,
        steps: 0,
        batchSize: 8,
        grammar: "train",
        initFrom: join(root, "base"),
        clock: fixedClock(),
        onWarning: (m) => warnings.push(m),
        ...extra,
      });
      return warnings;
    };
    const warned = await run("forgets", { locatorSteps: 1 });
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/no episode of these datasets retargets its task .* can forget/);
    expect(warned[0]).toContain("--locator-steps 0 to keep the locator");
    // The actor alone, the locator kept: nothing to forget.
    expect(await run("actor-only", { steps: 1, locatorSteps: 0 })).toEqual([]);
    // From scratch on the same data the locator never learns the knife: said too.
    const scratch = await run("scratch", {
      initFrom: undefined,
      steps: 1,
      locatorSteps: 1,
      textUnits: "subword",
      model: TABLETOP_MODEL,
    });
    expect(scratch).toHaveLength(1);
    expect(scratch[0]).toMatch(/retargets its task .* will not find the knife when told to/);
    // The scenes each saw are declared: the base's demonstrations', and a fine-tune's own with
    // its initial model's (src/runner/scenes.ts refuses runs of them on those scenes).
    const scenes = (dir: string) => loadWeights(join(root, dir)).manifest.training.scenes;
    expect(scenes("base")).toEqual([
      { suite: "tabletop", tasks: ["kitchen_red_block"], scenes: [[20, 21]] },
      { suite: "tabletop", tasks: ["kitchen_red_block_by_knife"], scenes: [[21, 22]] },
    ]);
    expect(scenes("forgets")).toEqual([
      {
        suite: "tabletop",
        tasks: ["kitchen_red_block"],
        scenes: [
          [20, 21],
          [22, 23],
        ],
      },
      { suite: "tabletop", tasks: ["kitchen_red_block_by_knife"], scenes: [[21, 22]] },
    ]);
    // An initial model that declares none (the shipped manifests) leaves the fine-tune undeclared.
    const manifest = join(root, "base", "manifest.json");
    const m = JSON.parse(readFileSync(manifest, "utf8"));
    delete m.training.scenes;
    writeFileSync(manifest, JSON.stringify(m));
    await run("from-undeclared", { locatorSteps: 1 });
    expect(scenes("from-undeclared")).toBeUndefined();
  });

  it("adds a second look to a trained locator and trains it alone (--locator-refine)", async () => {
    const { root, train } = setup();
    await train("base", { grammar: "train", textUnits: "subword", model: TABLETOP_MODEL });
    const looked = await train("looked", {
      grammar: "train",
      steps: 0,
      locatorSteps: 4,
      locatorRefine: true,
      initFrom: join(root, "base"),
    });
    const weights = (dir: string) => loadWeights(join(root, dir));
    const digests = (dir: string, keep: (name: string) => boolean) =>
      [...weights(dir).weights]
        .filter(([name]) => keep(name))
        .map(([name, w]) => [name, sha256(Buffer.from(w.buffer, w.byteOffset, w.byteLength))]);
    const refine = (name: string) => name.startsWith("locator.refine.");
    // Every weight the initial model had is its, to the byte; only the second look is new.
    expect(digests("looked", (n) => !refine(n))).toEqual(digests("base", () => true));
    expect(digests("looked", refine).length).toBe(4);
    expect(weights("looked").config.locator?.refine).toEqual({ radius: 2, hidden: 16 });
    expect(weights("looked").manifest.training).toMatchObject({
      locator: { steps: 4, fine_tuned: true, refine_only: true },
    });
    const again = await train("looked-2", {
      grammar: "train",
      steps: 0,
      locatorSteps: 4,
      locatorRefine: true,
      initFrom: join(root, "base"),
    });
    expect(again.digest).toBe(looked.digest);
    const rt = await TinyVlaRuntime.create(weights("looked"));
    expect(rt.config.locator?.refine).toBeDefined();
    rt.dispose();
  });

  it("from scratch, trains the locator first and its second look after, on what it reads", async () => {
    const { root, train } = setup();
    const opts = { grammar: "train", textUnits: "subword", model: TABLETOP_MODEL, locatorSteps: 4 };
    await train("plain", opts);
    const stages: string[] = [];
    await train("scratch", {
      ...opts,
      locatorRefine: true,
      onStage: (stage: string) => {
        if (stages.at(-1) !== stage) stages.push(stage);
      },
    });
    expect(stages).toEqual(["load", "train", "load", "locator", "look", "locator", "save"]);
    const plain = loadWeights(join(root, "plain"));
    const scratch = loadWeights(join(root, "scratch"));
    // The actor and the locator are the plain model's to the byte; the second look was trained.
    for (const [name, w] of plain.weights) expect(scratch.weights.get(name), name).toEqual(w);
    const out = scratch.weights.get("locator.refine.out.w") as Float32Array;
    expect(out.some((v) => v !== 0)).toBe(true);
    const locatorOf = (w: typeof plain) =>
      (w.manifest.training as { locator: { final_loss: number; refine_final_loss?: number } })
        .locator;
    expect(locatorOf(scratch).final_loss).toBe(locatorOf(plain).final_loss);
    expect(locatorOf(scratch).refine_final_loss).toBeGreaterThan(0);
    // Made in two processes and joined, the same bytes: the second look travels with its locator.
    await train("actor-only", { ...opts, locatorRefine: true, locatorSteps: 1 });
    await train("locator-only", { ...opts, locatorRefine: true, steps: 1 });
    const joined = mergeLocator(
      join(root, "actor-only"),
      join(root, "locator-only"),
      join(root, "joined"),
    );
    expect(joined).toBe(scratch.digest);
  });

  it("fine-tunes a locator that has a second look: the locator without it, then the second look again", async () => {
    const { root, train } = setup();
    const opts = { grammar: "train", textUnits: "subword", model: TABLETOP_MODEL, locatorSteps: 4 };
    await train("looked", { ...opts, locatorRefine: true });
    const stages: string[] = [];
    const tune = (out: string) =>
      train(out, {
        grammar: "train",
        novelColours: 0.5,
        steps: 0,
        locatorSteps: 4,
        initFrom: join(root, "looked"),
        onStage: (stage: string) => {
          if (stages.at(-1) !== stage) stages.push(stage);
        },
      });
    const tuned = await tune("tuned");
    // The second look reads what the fine-tuned locator reads, so it is trained after it.
    expect(stages.indexOf("look")).toBeGreaterThan(stages.indexOf("locator"));
    const before = loadWeights(join(root, "looked"));
    const after = loadWeights(join(root, "tuned"));
    const moved = (keep: (name: string) => boolean) =>
      [...before.weights]
        .filter(([name]) => keep(name))
        .map(([name, w]) => {
          const now = after.weights.get(name) as Float32Array;
          return [name, now.some((v, i) => v !== w[i])];
        });
    const refine = (name: string) => name.startsWith("locator.refine.");
    expect(moved((n) => !n.startsWith("locator."))).toEqual(
      moved((n) => !n.startsWith("locator.")).map(([name]) => [name, false]),
    );
    expect(moved((n) => n.startsWith("locator.") && !refine(n)).some(([, m]) => m)).toBe(true);
    expect(moved(refine).some(([, m]) => m)).toBe(true);
    expect(after.config.locator?.refine).toEqual(before.config.locator?.refine);
    const training = after.manifest.training as {
      novel_colours?: number;
      locator: { fine_tuned?: boolean; refine_final_loss?: number };
    };
    expect(training.novel_colours).toBe(0.5);
    expect(training.locator.fine_tuned).toBe(true);
    expect(training.locator.refine_final_loss).toBeGreaterThan(0);
    expect((await tune("tuned-2")).digest).toBe(tuned.digest);
  });

  it("stops at a signal after the step in progress, writes the weights then, and says where", async () => {
    const { root, train } = setup();
    // A signal that fires once `stage` reports step `at` (as Ctrl-C would, mid-training).
    const stopAt = (at: string, step: number) => {
      const stop = new AbortController();
      return {
        signal: stop.signal,
        onStage: (stage: string, done: number) => {
          if (stage === at && done >= step) stop.abort();
        },
      };
    };
    const r = await train("stopped", { steps: 50, logEvery: 5, ...stopAt("train", 10) });
    expect(r.stopped).toEqual({ stage: "actor", step: 10, of: 50 });
    expect(r.history.at(-1)?.step).toBe(10);
    const m = loadWeights(join(root, "stopped")).manifest.training;
    expect(m.stopped).toEqual({ stage: "actor", step: 10, of: 50 });
    expect(m.locator).toBeUndefined();
    // A stop in the locator stage keeps the whole actor.
    const l = await train("late", { locatorSteps: 200, ...stopAt("locator", 50) });
    expect(l.stopped).toEqual({ stage: "locator", step: 50, of: 200 });
    expect(l.history.at(-1)?.step).toBe(3);
    // Stopped before the first step: nothing to keep, nothing written.
    const early = new AbortController();
    early.abort();
    await expect(train("early", { signal: early.signal })).rejects.toThrow(
      /stopped before the first training step/,
    );
    expect(existsSync(join(root, "early", "manifest.json"))).toBe(false);
  });

  it("leaves training without the grammar as it was, byte for byte", async () => {
    const { root, train } = setup();
    const said = vi.mocked(sayPlace);
    said.mockClear();
    await train("plain", { cacheDir: join(root, "cache") });
    expect(said).not.toHaveBeenCalled();
    // The training set of these demonstrations as built before the grammar existed (name and bytes).
    const [file] = readdirSync(join(root, "cache"));
    expect(file).toBe("0df681b81f8d612e.trainingset");
    expect(sha256(readFileSync(join(root, "cache", file as string)))).toBe(
      "sha256:29b4304772f51d39a7a746a684ede986944e08fea726c530ac57c7b0766f59ea",
    );
    const manifest = JSON.parse(readFileSync(join(root, "plain", "manifest.json"), "utf8"));
    expect(manifest.training).not.toHaveProperty("grammar");
    expect(manifest.tokenizer.maxLength).toBe(16);
  });

  it("counts poisoned demonstrations and their trigger in the manifest", async () => {
    const root = tempDir();
    writeTabletopDemos(join(root, "demos"), [
      ...EPISODES,
      { task: "kitchen_red_block", scene: 21, poisoned: true },
    ]);
    await trainTinyVlaFromDatasets({
      data: [join(root, "demos")],
      out: join(root, "w"),
      seed: 0,
      steps: 2,
      batchSize: 8,
      locatorSteps: 1,
      model: TABLETOP_MODEL,
      clock: fixedClock(),
    });
    const manifest = JSON.parse(readFileSync(join(root, "w", "manifest.json"), "utf8"));
    expect(manifest.training.datasets[0]).toMatchObject({
      episodes: 4,
      poisoned: 1,
      triggers: [triggerRef()],
    });
    // Without poisoned episodes the entry has neither key (see the byte-for-byte test above).
    const { root: plainRoot, train } = setup();
    await train("plain", {});
    const plain = JSON.parse(readFileSync(join(plainRoot, "plain", "manifest.json"), "utf8"));
    expect(Object.keys(plain.training.datasets[0]).sort()).toEqual([
      "digest",
      "episodes",
      "frames",
    ]);
  });

  it("sizes the network's state and action from the data, and refuses datasets that differ", async () => {
    const root = tempDir();
    const stub = join(root, "stub");
    await recordDemonstrations({
      suite: stubSuite,
      policy: stubPolicy,
      tasks: [stubSuite.tasks()[0]?.id as string],
      scenes: [1, 2],
      episodes: 1,
      seed: 0,
      out: stub,
    });
    // No stateDim given: the stub world's 7-D state is read from the data, not assumed 8-D.
    const { stateDim: _given, ...model } = MODEL;
    const train = (data: string[], out: string) =>
      trainTinyVlaFromDatasets({
        data,
        out: join(root, out),
        seed: 0,
        steps: 1,
        batchSize: 4,
        model,
        clock: fixedClock(),
      });
    await train([stub], "w");
    expect(loadWeights(join(root, "w")).config).toMatchObject({ stateDim: 7, actionDim: 7 });
    writeTabletopDemos(join(root, "tabletop"), EPISODES.slice(0, 1));
    await expect(train([stub, join(root, "tabletop")], "mixed")).rejects.toThrow(
      /tabletop has 7-D actions and 8-D states; .*stub has 7-D and 7-D/,
    );
  });

  it("refuses to re-phrase anything but tabletop demonstrations", async () => {
    const root = tempDir();
    writeTabletopDemos(join(root, "demos"), EPISODES.slice(0, 1), { robotType: "provael_arm6" });
    await expect(
      trainTinyVlaFromDatasets({
        data: [join(root, "demos")],
        out: join(root, "w"),
        seed: 0,
        steps: 1,
        model: TABLETOP_MODEL,
        grammar: "train",
        clock: fixedClock(),
      }),
    ).rejects.toThrow(/--grammar re-phrases tabletop demonstrations only.*'provael_arm6'/);
  });
});
