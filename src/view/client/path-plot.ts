/// <reference lib="dom" />
/** The top-down path (x, y of the end effector) of both episodes, the task's zones behind them. */
import type { TrajectoryStepFile } from "../../rundir/schema/index.js";
import type { ZonePayload } from "../payloads.js";
import { s } from "./dom.js";

const W = 300;
const COLOURS = ["#c62828", "#607d8b"];

export interface PathPlot {
  svg: SVGElement;
  /** Moves each side's marker to its pose at this step (hidden where it has none). */
  show(step: number): void;
}

export function pathPlot(sides: TrajectoryStepFile[][], zones: ZonePayload[]): PathPlot {
  const poses = sides.flat().flatMap((x) => (x.pose ? [x.pose] : []));
  const xs = poses
    .map((p) => p[0] as number)
    .concat(zones.flatMap((z) => [z.min[0] as number, z.max[0] as number]));
  const ys = poses
    .map((p) => (p[1] ?? 0) as number)
    .concat(zones.flatMap((z) => [z.min[1] as number, z.max[1] as number]));
  const [x0, x1] = [Math.min(...xs, 0), Math.max(...xs, 0.01)];
  const [y0, y1] = [Math.min(...ys, 0), Math.max(...ys, 0.01)];
  const span = Math.max(x1 - x0, y1 - y0, 1e-6);
  const project = (p: number[]): [number, number] => [
    10 + (((p[0] as number) - x0) / span) * (W - 20),
    W - 10 - ((((p[1] ?? 0) as number) - y0) / span) * (W - 20),
  ];
  const svg = s("svg", {
    class: "path",
    width: W,
    height: W,
    viewBox: `0 0 ${W} ${W}`,
    id: "path-plot",
  });
  for (const z of zones) {
    const [ax, ay] = project(z.min);
    const [bx, by] = project(z.max);
    svg.append(
      s("rect", {
        x: Math.min(ax, bx),
        y: Math.min(ay, by),
        width: Math.abs(bx - ax),
        height: Math.abs(by - ay),
        fill: "rgba(198,40,40,.15)",
        stroke: "#c62828",
      }),
    );
  }
  // Two sides are always drawn (an empty twin draws nothing but keeps its hidden marker).
  const lists = [sides[0] ?? [], sides[1] ?? []];
  const markers = lists.map((list, i) => {
    const pts = list.flatMap((x) => (x.pose ? [project(x.pose)] : []));
    const colour = COLOURS[i] as string;
    if (pts.length > 0)
      svg.append(
        s("polyline", {
          points: pts.map((p) => p.join(",")).join(" "),
          fill: "none",
          stroke: colour,
          "stroke-width": 1.5,
        }),
      );
    const mk = s("circle", { r: 4, fill: colour, cx: 0, cy: 0, visibility: "hidden" });
    svg.append(mk);
    return mk;
  });
  return {
    svg,
    show(step) {
      markers.forEach((mk, i) => {
        const st = lists[i]?.find((x) => x.step === step);
        mk.setAttribute("visibility", st?.pose ? "visible" : "hidden");
        if (st?.pose) {
          const [cx, cy] = project(st.pose);
          mk.setAttribute("cx", String(cx));
          mk.setAttribute("cy", String(cy));
        }
      });
    },
  };
}
