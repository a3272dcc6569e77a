#!/usr/bin/env node
// Joins the actor of one tiny-vla training with the locator of another trained on the same data
// with the same recipe, so the two stages can run in two processes at once (after
// `npm run build`):
//
//   provael train tiny-vla … --seed S --steps 20000 --locator-steps 1 --out A   # the actor
//   provael train tiny-vla … --seed S --steps 1 --locator-steps 6000 --out B    # the locator
//   node research/merge-locator.mjs A B OUT
//
// OUT holds the bytes one `--steps 20000 --locator-steps 6000` training writes; where the two
// seeds differ, the one with the actor's --seed and the locator's as --locator-seed
// (src/offline/merge-locator.ts says why; its test checks it).
import { mergeLocator } from "../dist/offline/merge-locator.js";
import { exitWithError } from "./script-args.mjs";

const [actorDir, locatorDir, out] = process.argv.slice(2);
if (!actorDir || !locatorDir || !out) {
  console.error("usage: node research/merge-locator.mjs ACTOR_DIR LOCATOR_DIR OUT_DIR");
  process.exit(2);
}
try {
  const digest = mergeLocator(actorDir, locatorDir, out);
  console.log(`wrote ${out} (${digest}): the actor of ${actorDir}, the locator of ${locatorDir}`);
} catch (e) {
  exitWithError("merge-locator", e);
}
