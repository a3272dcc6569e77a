/**
 * The training loss curve as SVG, drawn by vega-lite like report.html's charts: the training loss
 * (a line) and the validation loss (points) against the step, loss on a log scale.
 *
 * @example
 *   writeFileSync("loss-curve.svg", await lossCurveSvg(result.history, { title: "tiny-vla seed 0" }));
 */
import type { TopLevelSpec } from "vega-lite";
import { vegaLiteSvg } from "../core/vega.js";

export interface CurvePoint {
  step: number;
  loss: number;
  validation?: number;
}

/** The vega-lite spec of the curve (values that a log scale cannot show are left out). */
export function lossCurveSpec(
  history: readonly CurvePoint[],
  options: { title?: string; width?: number; height?: number } = {},
): TopLevelSpec {
  const shown = (v: number | undefined): v is number =>
    v !== undefined && v > 0 && Number.isFinite(v);
  const values = history.flatMap((h) => [
    ...(shown(h.loss) ? [{ step: h.step, loss: h.loss, series: "train" }] : []),
    ...(shown(h.validation) ? [{ step: h.step, loss: h.validation, series: "validation" }] : []),
  ]);
  const x = { field: "step", type: "quantitative", title: "step" } as const;
  const y = {
    field: "loss",
    type: "quantitative",
    title: "loss (log)",
    scale: { type: "log" },
  } as const;
  const color = {
    field: "series",
    type: "nominal",
    title: null,
    scale: { domain: ["train", "validation"], range: ["#1f77b4", "#e67814"] },
  } as const;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    ...(options.title ? { title: options.title } : {}),
    width: options.width ?? 640,
    height: options.height ?? 340,
    background: "white",
    data: { values },
    layer: [
      {
        transform: [{ filter: "datum.series === 'train'" }],
        mark: { type: "line", strokeWidth: 2 },
        encoding: { x, y, color },
      },
      {
        transform: [{ filter: "datum.series === 'validation'" }],
        mark: { type: "point", filled: true, size: 40 },
        encoding: { x, y, color },
      },
    ],
  };
}

/** The curve as an SVG string. */
export function lossCurveSvg(
  history: readonly CurvePoint[],
  options: { title?: string; width?: number; height?: number } = {},
): Promise<string> {
  return vegaLiteSvg(lossCurveSpec(history, options));
}
