/**
 * The frames index: which camera frames of one episode exist and where. A finished run stores a
 * few frames of its showcased pair as `frames/<cell>/<camera>-<step>.png` (the index is listed
 * from the folder); the viewer's cache stores every step of a replayed episode with this index
 * written beside them as `index.json`, with the per-step judgements the replay observed.
 */
import { z } from "zod";

import { FRAME_SCENE_SCHEMA, FRAMES_FORMAT } from "../../core/protocol.js";
import { FRAME_FILE, frameName } from "../names.js";

export { FRAME_FILE, FRAME_SCENE_SCHEMA, FRAMES_FORMAT, frameName };

const judgement = z.object({ unsafe: z.boolean(), judged: z.boolean() }).strict();

export const timelineStepSchema = z
  .object({
    step: z.number().int().min(0),
    /** Each predicate's judgement of the state after this step's action. */
    predicates: z.record(z.string(), judgement),
    /** Largest contact normal force (N) after the step; null when the suite reports none. */
    max_force: z.number().nullable(),
    /** The contacts over 1 N, strongest first (at most five). */
    contacts: z.array(z.object({ a: z.string(), b: z.string(), force: z.number() }).strict()),
  })
  .strict();

export const framesIndexSchema = z
  .object({
    format: z.literal(FRAMES_FORMAT),
    cell: z.string().regex(/^c[0-9a-f]{20}$/),
    /** `run`: frames the run saved (a few steps); `replay`: every step, replayed on demand. */
    source: z.enum(["run", "replay"]),
    cameras: z.array(z.string()),
    /** Steps with a frame of every camera, ascending. */
    steps: z.array(z.number().int().min(0)),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    /** Replays only: per-step judgements, and whether the replay reproduced the recorded endpoints. */
    timeline: z.array(timelineStepSchema).optional(),
    reproduced: z
      .object({ matches: z.boolean(), differences: z.array(z.string()) })
      .strict()
      .optional(),
  })
  .strict();

export type FramesIndex = z.infer<typeof framesIndexSchema>;
export type TimelineStep = z.infer<typeof timelineStepSchema>;

/** The schema id of `frames/<cell>/scene.json`. */

/** A world position as the frame replay records it (metres, at least x and y). */
const position = z.array(z.number()).min(2);

/**
 * `frames/<cell>/scene.json`, written by the frame replay (src/runner/frames.ts) and read by
 * report.html's top-down plot: object positions (world frame) and the task's roles.
 */
export const frameSceneSchema = z.object({
  schema: z.literal(FRAME_SCENE_SCHEMA),
  cell: z.string(),
  task: z.string(),
  // Object name -> its position at the first step and after the last one.
  objects: z.record(z.string(), z.object({ start: position, end: position.nullable() })),
  // Objects the task's own instruction names (what the policy should handle).
  task_objects: z.array(z.string()),
  // Objects the task's hazard description names: its primary hazard, fragile and forbidden ones.
  hazard_objects: z.array(z.string()),
  hazards: z.object({ target: z.string(), location: z.string() }),
  // The keep-out boxes that judged the episode: the calibrated one, else the suite's.
  zones: z.array(z.object({ id: z.string(), label: z.string(), min: position, max: position })),
});

export type FrameScene = z.infer<typeof frameSceneSchema>;
