/** The messages between the playground page and its Web Workers (one player each). */
import type { Image } from "../../core/types.js";
import type { Cell, PlanSpec } from "../../runner/plan.js";
import type { CellResult, ExecutorSetup } from "../../runner/play-cell.js";
import type { PageProbe } from "../session.js";

export type ToWorker =
  | { type: "init"; plan: PlanSpec; assets: Record<string, Uint8Array>; wasmBase: string }
  | { type: "play"; setup: ExecutorSetup; cell: Cell };

export type FromWorker =
  | { type: "ready"; probe: PageProbe }
  | { type: "frame"; cell: string; step: number; images: Record<string, Image> }
  | { type: "done"; result: CellResult }
  | { type: "error"; message: string };
