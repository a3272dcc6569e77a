/// <reference lib="dom" />
/**
 * Replays dropped episodes in the page: their recorded actions are sent to a Web Worker that
 * runs the suite (MuJoCo in WebAssembly) and sends back every camera's frame of every step as
 * PNG, shown from object URLs. The worker is the playground's (src/view/client/replay/worker.ts),
 * so the page replays only where it is served with the playground; nothing leaves the machine.
 */
import type { EpisodeRecordPayload } from "../../payloads.js";
import type { RecordedEpisode } from "../../replay-actions.js";
import type { ReplayReply, ReplayRequest } from "../replay/protocol.js";
import type { LocalRun } from "./run-files.js";
import { stepsOf } from "./run-files.js";
import type { ReplayedFrames, Replayer } from "./source.js";

/** What the frames show, said beside them. */
function noteFor(episode: EpisodeRecordPayload): string {
  const base =
    "Replayed in this page from the episode's recorded actions (MuJoCo in a Web Worker), every camera at every step.";
  return episode.perturbed.inputs
    ? `${base} The cameras show the scene: the arm's perturbation of the images the policy received is not drawn on them.`
    : base;
}

/** A replayer backed by the worker at `workerUrl` (started on the first episode). */
export function workerReplayer(workerUrl: string): Replayer {
  let worker: Worker | null = null;
  let next = 0;
  const waiting = new Map<number, (m: ReplayReply) => void>();
  const start = (): Worker => {
    if (worker) return worker;
    const w = new Worker(workerUrl, { type: "module" });
    w.onmessage = (e: MessageEvent<ReplayReply>) => {
      waiting.get(e.data.id)?.(e.data);
      waiting.delete(e.data.id);
    };
    w.onerror = (e) => {
      for (const [id, done] of waiting)
        done({ type: "error", id, message: e.message || "the replay worker failed to start" });
      waiting.clear();
      worker = null;
    };
    worker = w;
    return w;
  };
  return async (run: LocalRun, episode: EpisodeRecordPayload) => {
    // A run in progress has no report yet: its journal's header names the plan.
    const report = run.report;
    const { episodes: _, ...head } = report ?? { episodes: [] };
    const steps = (await stepsOf(run)).get(episode.cell) ?? [];
    if (steps.length === 0) return { reason: "the run recorded no steps for this episode" };
    const id = next++;
    const request: ReplayRequest = {
      type: "replay",
      id,
      plan: run.read.header?.plan ?? null,
      report: report ? (head as ReplayRequest["report"]) : null,
      bridged: Boolean(run.read.header?.bridge ?? report?.run.bridge),
      episode: episode as RecordedEpisode,
      steps,
    };
    const reply = await new Promise<ReplayReply>((done) => {
      waiting.set(id, done);
      start().postMessage(request);
    });
    if (reply.type === "refused") return { reason: reply.reason };
    if (reply.type === "error") return { reason: `the replay failed: ${reply.message}` };
    const urls = new Map(Object.entries(reply.frames).map(([n, b]) => [n, URL.createObjectURL(b)]));
    const frames: ReplayedFrames = {
      index: reply.index,
      url: (name) => urls.get(name) ?? "",
      note: noteFor(episode),
    };
    return frames;
  };
}
