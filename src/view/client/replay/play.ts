/// <reference lib="dom" />
/**
 * The replay worker's work, loaded once the scenes are installed (the suites read their MJCF as
 * they load): one suite instance per suite, every camera on, kept open between episodes; each
 * frame encoded as PNG by the worker's own canvas.
 */
import type { PlanSpec } from "../../../core/plan.js";
import type { Image, SuiteInstance } from "../../../core/types.js";
import { frameName } from "../../../rundir/names.js";
import { planFromReport } from "../../../runner/replay.js";
import { suites } from "../../../suites/index.js";
import { actionReplayRefusal, replayActions } from "../../replay-actions.js";
import type { ReplayReply, ReplayRequest } from "./protocol.js";

const open = new Map<string, Promise<SuiteInstance>>();

/** An image as PNG bytes (grey, RGB or RGBA rows, top row first). */
async function png(im: Image): Promise<Blob> {
  const n = im.width * im.height;
  const rgba = new Uint8ClampedArray(n * 4);
  const c = im.channels;
  for (let i = 0; i < n; i++) {
    const r = im.data[i * c] as number;
    rgba[i * 4] = r;
    rgba[i * 4 + 1] = c >= 3 ? (im.data[i * c + 1] as number) : r;
    rgba[i * 4 + 2] = c >= 3 ? (im.data[i * c + 2] as number) : r;
    rgba[i * 4 + 3] = c === 4 ? (im.data[i * c + 3] as number) : 255;
  }
  const canvas = new OffscreenCanvas(im.width, im.height);
  const ctx = canvas.getContext("2d");
  if (!ctx) throw new Error("this browser gives a worker no 2D canvas");
  ctx.putImageData(new ImageData(rgba, im.width, im.height), 0, 0);
  return canvas.convertToBlob({ type: "image/png" });
}

export async function replay(m: ReplayRequest): Promise<ReplayReply> {
  const refused = (reason: string): ReplayReply => ({ type: "refused", id: m.id, reason });
  if (m.bridged)
    return refused(
      "a benchmark played this run through `provael bridge`: its world is not Provael's to replay",
    );
  let plan: PlanSpec;
  try {
    plan =
      m.plan ??
      planFromReport(
        { ...(m.report as object), episodes: [] } as unknown as Parameters<
          typeof planFromReport
        >[0],
        "report.json",
      );
  } catch (e) {
    return refused((e as Error).message);
  }
  const suite = suites.has(plan.suite) ? suites.get(plan.suite) : null;
  const why = actionReplayRefusal(plan, suite);
  if (why || !suite) return refused(why ?? "no suite");
  let instance = open.get(suite.id);
  if (!instance) {
    instance = suite.open({ cameras: suite.capabilities.cameras });
    open.set(suite.id, instance);
  }
  const frames: Record<string, Blob> = {};
  const index = await replayActions({
    plan,
    suite,
    instance: await instance,
    episode: m.episode,
    steps: m.steps,
    onFrame: async (camera, step, image) => {
      frames[frameName(camera, step)] = await png(image);
    },
  });
  return { type: "frames", id: m.id, index, frames };
}
