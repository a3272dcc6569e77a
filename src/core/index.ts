export * from "./canonical-json.js";
export * from "./clock.js";
export * from "./digest.js";
export * from "./errors.js";
export * from "./registry.js";
export * from "./rng.js";
export type * from "./types.js";
