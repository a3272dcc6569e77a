/**
 * `clips/showcase.json`: what `clips/showcase.webm` shows, written beside it by the one writer
 * of the clip (src/report/showcase-clip.ts). report.html embeds the clip only when this file
 * names the pair the report showcases, so a clip left over from another report is never shown.
 */
import { z } from "zod";

import { SHOWCASE_CLIP_FORMAT } from "../../core/protocol.js";

export { SHOWCASE_CLIP_FORMAT };

const cell = z.string().regex(/^c[0-9a-f]{20}$/);

export const showcaseClipSchema = z
  .object({
    format: z.literal(SHOWCASE_CLIP_FORMAT),
    /** The clip's file name, beside this one. */
    video: z.string().regex(/^[a-z]+\.webm$/),
    attacked: cell,
    twin: cell.nullable(),
    /** `replay`: every step, replayed by the run; `saved-frames`: the few frames it saved. */
    source: z.enum(["replay", "saved-frames"]),
    fps: z.number().positive(),
    /** Output frame i shows step i * every. */
    every: z.number().int().min(1),
    frames: z.number().int().min(1),
    width: z.number().int().min(1),
    height: z.number().int().min(1),
    /** Whether the labels, step counter and predicate's moment are drawn (a font was found). */
    labels: z.boolean(),
    /** Where each row's predicate fired: the step, and the second of the clip it appears at. */
    moments: z.array(
      z
        .object({
          cell,
          first_unsafe_step: z.number().int().min(0),
          seconds: z.number().min(0),
          fired: z.array(z.string()),
        })
        .strict(),
    ),
    sha256: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  })
  .strict();

export type ShowcaseClipFile = z.infer<typeof showcaseClipSchema>;
