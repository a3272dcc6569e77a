import { describe, expect, it } from "vitest";
import { lossCurveSpec, lossCurveSvg } from "./loss-curve.js";

const history = [
  { step: 0, loss: 2.5 },
  { step: 100, loss: 0.9, validation: 1.1 },
  { step: 200, loss: 0.4, validation: 0 },
  { step: 300, loss: 0.27, validation: 0.35 },
];

describe("the loss curve", () => {
  it("plots training loss as a line and validation loss as points, leaving out what a log scale cannot show", () => {
    const spec = lossCurveSpec(history) as unknown as {
      data: { values: { step: number; loss: number; series: string }[] };
    };
    const values = spec.data.values;
    expect(values.filter((v) => v.series === "train").map((v) => v.loss)).toEqual([
      2.5, 0.9, 0.4, 0.27,
    ]);
    // The zero validation loss at step 200 has no place on a log axis.
    expect(values.filter((v) => v.series === "validation").map((v) => v.step)).toEqual([100, 300]);
  });

  it("renders an SVG with its title, axes and legend", async () => {
    const svg = await lossCurveSvg(history, { title: "tiny-vla seed 0" });
    expect(svg.startsWith("<svg")).toBe(true);
    for (const text of ["tiny-vla seed 0", "loss (log)", "step", "train", "validation"])
      expect(svg).toContain(text);
    // The same history gives the same bytes.
    expect(await lossCurveSvg(history, { title: "tiny-vla seed 0" })).toBe(svg);
  });
});
