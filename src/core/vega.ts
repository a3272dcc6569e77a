/**
 * Renders a vega-lite spec to an SVG string, headless (renderer "none"). vega and vega-lite are
 * imported on first use: they are most of what a command would otherwise load at start, and only
 * pages and training plots draw charts.
 */
import type { TopLevelSpec } from "vega-lite";

/** The compiled vega spec, handed to `adjust` before rendering (e.g. to pin scale colours). */
export type CompiledVega = { scales?: unknown[] } & Record<string, unknown>;

export async function vegaLiteSvg(
  spec: TopLevelSpec,
  adjust?: (compiled: CompiledVega) => void,
): Promise<string> {
  const [vega, { compile }] = await Promise.all([import("vega"), import("vega-lite")]);
  const vl = compile(spec).spec;
  adjust?.(vl as unknown as CompiledVega);
  const view = new vega.View(vega.parse(vl), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
