/** tiny-vla: our small vision-language-action model (docs/tiny-vla.md). */
export { DEFAULT_REPLAN, TinyVlaInstance, tinyVlaPolicy } from "./policy.js";
export { TinyVlaRuntime } from "./runtime.js";
export { SubwordEncoder } from "./subword.js";
export type { TextUnits } from "./text-units.js";
export { Tokenizer } from "./tokenizer.js";
export { type LossRecord, type TrainingSet, type TrainOptions, trainTinyVla } from "./train.js";
export { loadWeights, type Manifest, SHIPPED_WEIGHTS_DIR } from "./weights.js";
export { saveWeights } from "./weights-files.js";
