/**
 * The charts of report.html, rendered to SVG at build time so the page needs no script: the arms
 * chart through vega-lite and vega (headless, renderer "none"), the heatmap and the path plot by
 * hand, since they are simple and their layout is ours to control.
 */
import type { TopLevelSpec } from "vega-lite";
import { vegaLiteSvg } from "../core/vega.js";
import type { ArmReport, Rate, Report } from "./build.js";
import { displayOrder, pct } from "./format.js";
import { escapeHtml, ROLE_COLOURS } from "./html-style.js";

interface ArmDatum {
  order: number;
  label: string;
  arm: string;
  role: string;
  rate: number;
  low: number;
  high: number;
  text: string;
}

/** The vega-lite spec of the arms chart: each arm's rate and Wilson interval, floor shaded. */
export function armsChartSpec(report: Report): TopLevelSpec {
  const order = displayOrder(report);
  const values: ArmDatum[] = [];
  order.forEach((arm, i) => {
    const a = report.arms[arm];
    if (!a || a.unsafe.rate === null || a.unsafe.interval === null) return;
    values.push({
      order: i,
      label: a.role === "control" ? `↳ ${arm}` : arm,
      arm,
      role: a.role,
      rate: a.unsafe.rate,
      low: a.unsafe.interval.low,
      high: a.unsafe.interval.high,
      text: `${pct(a.unsafe.rate)}  (${a.unsafe.successes}/${a.unsafe.n})`,
    });
  });
  const floorArm = report.tests.baseline_arm;
  const floor = floorArm === null ? null : (report.arms[floorArm]?.unsafe ?? null);
  const labels = values.map((v) => v.label);
  const y = {
    field: "label",
    type: "nominal" as const,
    sort: labels,
    title: null,
    axis: {
      labelLimit: 240,
      labelFontSize: 12,
      labelPadding: 6,
      ticks: false,
      domain: false,
      // Treatments in bold, controls (indented with ↳) in the control colour.
      labelFontWeight: {
        condition: { test: "indexof(datum.value, '↳') === 0", value: "normal" },
        value: "bold",
      },
      labelColor: {
        condition: { test: "indexof(datum.value, '↳') === 0", value: ROLE_COLOURS.control },
        value: "#0f172a",
      },
    },
  };
  const layer: unknown[] = [];
  if (floor?.interval) {
    layer.push(
      {
        data: { values: [{ low: floor.interval.low, high: floor.interval.high }] },
        mark: { type: "rect", color: "#94a3b8", opacity: 0.18 },
        encoding: { x: { field: "low", type: "quantitative" }, x2: { field: "high" } },
      },
      {
        data: { values: [{ rate: floor.rate }] },
        mark: { type: "rule", color: "#64748b", strokeDash: [4, 3], strokeWidth: 1.2 },
        encoding: { x: { field: "rate", type: "quantitative" } },
      },
    );
  }
  layer.push(
    {
      mark: { type: "rule", strokeWidth: 3, strokeCap: "round" },
      encoding: {
        y,
        x: { field: "low", type: "quantitative" },
        x2: { field: "high" },
        color: { field: "role", type: "nominal", legend: null },
      },
    },
    {
      mark: {
        type: "point",
        filled: true,
        size: 90,
        opacity: 1,
        stroke: "white",
        strokeWidth: 1.2,
      },
      encoding: {
        y,
        x: { field: "rate", type: "quantitative" },
        color: { field: "role", type: "nominal", legend: null },
      },
    },
    {
      mark: { type: "text", align: "left", dx: 8, fontSize: 11.5, color: "#334155" },
      encoding: { y, x: { field: "high", type: "quantitative" }, text: { field: "text" } },
    },
  );
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: 640,
    height: { step: 26 },
    background: "white",
    padding: { left: 6, right: 6, top: 8, bottom: 6 },
    data: { values },
    encoding: {
      x: {
        type: "quantitative",
        scale: { domain: [0, 1], clamp: true, nice: false },
        axis: {
          format: ".0%",
          title: "unsafe episodes / judged episodes (95% Wilson interval)",
          grid: true,
          tickCount: 5,
          titleFontWeight: "normal",
          titleColor: "#475569",
        },
      },
    },
    resolve: { scale: { x: "shared" } },
    layer,
    config: {
      view: { stroke: null },
      font: "DejaVu Sans, Liberation Sans, Arial, sans-serif",
      axis: { labelColor: "#334155", gridColor: "#eef2f7", domainColor: "#cbd5e1" },
    },
  } as unknown as TopLevelSpec;
}

/** The arms chart as an SVG string. */
export function armsChartSvg(report: Report): Promise<string> {
  return vegaLiteSvg(armsChartSpec(report), (vl) => {
    // Fix role colours by name, not by order of appearance.
    for (const scale of (vl.scales ?? []) as Array<Record<string, unknown>>) {
      if (scale.name === "color") {
        scale.domain = ["baseline", "control", "treatment"];
        scale.range = [ROLE_COLOURS.baseline, ROLE_COLOURS.control, ROLE_COLOURS.treatment];
      }
    }
  });
}

/** White to deep red: the colour of an unsafe rate in the heatmap. */
export function heatColour(rate: number): string {
  const t = Math.max(0, Math.min(1, rate));
  const from = [255, 247, 237];
  const to = [185, 28, 28];
  const c = from.map((f, i) => Math.round(f + ((to[i] as number) - f) * t ** 0.8));
  return `rgb(${c.join(",")})`;
}

/** Tasks × arms of unsafe rates, as SVG. */
export function heatmapSvg(report: Report): string {
  const arms = displayOrder(report);
  const tasks = report.run.tasks;
  const left = Math.min(220, 16 + 7.2 * Math.max(4, ...tasks.map((t) => t.length)));
  const cw = 74;
  const ch = 40;
  const top = 12 + 6.5 * Math.max(4, ...arms.map((a) => a.length)) * 0.72 + 14;
  // Room on the right for the last rotated column label.
  const width = left + cw * arms.length + 6.5 * Math.max(...arms.map((a) => a.length), 4) * 0.77;
  const height = top + ch * tasks.length + 40;
  const parts: string[] = [];
  arms.forEach((arm, j) => {
    const role = report.arms[arm]?.role ?? "treatment";
    const cx = left + cw * j + cw / 2;
    parts.push(
      `<text transform="translate(${cx + 4},${top - 8}) rotate(-40)" font-size="11.5" fill="${ROLE_COLOURS[role]}" font-weight="${role === "treatment" ? 600 : 400}">${escapeHtml(arm)}</text>`,
    );
  });
  tasks.forEach((task, i) => {
    const y = top + ch * i;
    parts.push(
      `<text x="${left - 8}" y="${y + ch / 2 + 4}" font-size="12" text-anchor="end" fill="#0f172a">${escapeHtml(task)}</text>`,
    );
    arms.forEach((arm, j) => {
      const r: Rate | undefined = report.by_task[task]?.[arm];
      const x = left + cw * j;
      const na = r === undefined || r.rate === null;
      const fill = na ? "#f1f5f9" : heatColour(r.rate as number);
      const dark = !na && (r.rate as number) > 0.55;
      parts.push(
        `<rect x="${x + 1}" y="${y + 1}" width="${cw - 2}" height="${ch - 2}" rx="4" fill="${fill}"><title>${escapeHtml(`${task} × ${arm}: ${na ? "N/A" : `${r.successes}/${r.n} = ${pct(r.rate)}`}`)}</title></rect>`,
        `<text x="${x + cw / 2}" y="${y + 18}" font-size="12.5" font-weight="600" text-anchor="middle" fill="${dark ? "#fff" : "#0f172a"}">${na ? "N/A" : pct(r.rate).replace(".0%", "%")}</text>`,
        `<text x="${x + cw / 2}" y="${y + 32}" font-size="10" text-anchor="middle" fill="${dark ? "#fee2e2" : "#64748b"}">${na ? "" : `${r.successes}/${r.n}`}</text>`,
      );
    });
  });
  // Legend: the colour ramp from 0% to 100%.
  const ly = top + ch * tasks.length + 12;
  const stops = [0, 0.25, 0.5, 0.75, 1]
    .map((t) => `<stop offset="${t * 100}%" stop-color="${heatColour(t)}"/>`)
    .join("");
  parts.push(
    `<defs><linearGradient id="heat-ramp">${stops}</linearGradient></defs>`,
    `<rect x="${left}" y="${ly}" width="160" height="8" rx="2" fill="url(#heat-ramp)"/>`,
    `<text x="${left}" y="${ly + 20}" font-size="10" fill="#64748b">0%</text>`,
    `<text x="${left + 160}" y="${ly + 20}" font-size="10" text-anchor="end" fill="#64748b">100% unsafe</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width.toFixed(0)}" height="${height.toFixed(0)}" viewBox="0 0 ${width.toFixed(0)} ${height.toFixed(0)}" role="img" aria-label="unsafe rate per task and arm">${parts.join("")}</svg>`;
}

export interface PathSeries {
  label: string;
  colour: string;
  /** Per step: [x, y] of the end effector, or null where the step had no pose. */
  points: Array<[number, number] | null>;
  /** Steps the predicate judged unsafe. */
  unsafe: boolean[];
}

export interface PlotZone {
  id: string;
  label: string;
  min: [number, number];
  max: [number, number];
}

/** An object of the scene on the top-down plot: where it started and where it ended. */
export interface PlotObject {
  name: string;
  start: [number, number];
  /** Null when the end is unknown; drawn only when the object moved. */
  end: [number, number] | null;
  /** The object the task names, one of its hazards (primary, fragile or forbidden), or neither. */
  role: "target" | "hazard" | "other";
}

const OBJECT_COLOURS: Record<PlotObject["role"], string> = {
  target: "#2563eb",
  hazard: "#b91c1c",
  other: "#64748b",
};

/**
 * A top-down plot of end-effector paths against keep-out zones and the scene's objects. When every path has a constant
 * y (a 1-D suite), x is plotted against the step instead and `oneDimensional` says so.
 */
export function pathPlotSvg(
  series: PathSeries[],
  zones: PlotZone[],
  objects: PlotObject[] = [],
): { svg: string; oneDimensional: boolean } {
  const all = series.flatMap((s) => s.points.filter((p): p is [number, number] => p !== null));
  const ys = all.map((p) => p[1]);
  const oneDimensional =
    all.length > 0 && Math.max(...ys) - Math.min(...ys) < 1e-9 && zones.length === 0;
  const project = (s: PathSeries) =>
    s.points.map((p, i) =>
      p === null ? null : oneDimensional ? ([i, p[0]] as [number, number]) : p,
    );
  const projected = series.map(project);
  const pts = projected.flat().filter((p): p is [number, number] => p !== null);
  const shown = oneDimensional ? [] : objects;
  const objectPts = shown.flatMap((o) => (o.end ? [o.start, o.end] : [o.start]));
  const zx = [...zones.flatMap((z) => [z.min[0], z.max[0]]), ...objectPts.map((p) => p[0])];
  const zy = [...zones.flatMap((z) => [z.min[1], z.max[1]]), ...objectPts.map((p) => p[1])];
  const xsAll = [...pts.map((p) => p[0]), ...zx];
  const ysAll = [...pts.map((p) => p[1]), ...zy];
  let [x0, x1] = [Math.min(...xsAll), Math.max(...xsAll)];
  let [y0, y1] = [Math.min(...ysAll), Math.max(...ysAll)];
  if (!Number.isFinite(x0)) [x0, x1, y0, y1] = [0, 1, 0, 1];
  const padX = (x1 - x0 || 1) * 0.08;
  const padY = (y1 - y0 || 1) * 0.08;
  x0 -= padX;
  x1 += padX;
  y0 -= padY;
  y1 += padY;
  const W = oneDimensional ? 720 : 560;
  const H = 380;
  const m = { l: 58, r: 16, t: 16 + 18 * series.length, b: 44 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  let sx = pw / (x1 - x0);
  let sy = ph / (y1 - y0);
  if (!oneDimensional) {
    // Same metres per pixel on both axes for a top-down view: widen the narrower range, centred.
    if (sx > sy) {
      const extra = pw / sy - (x1 - x0);
      x0 -= extra / 2;
      x1 += extra / 2;
      sx = sy;
    } else {
      const extra = ph / sx - (y1 - y0);
      y0 -= extra / 2;
      y1 += extra / 2;
      sy = sx;
    }
  }
  const X = (v: number) => m.l + (v - x0) * sx;
  const Y = (v: number) => m.t + ph - (v - y0) * sy;
  const parts: string[] = [
    `<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="#fbfdff" stroke="#e2e8f0"/>`,
  ];
  const ticks = (a: number, b: number) => {
    const step = 10 ** Math.floor(Math.log10((b - a) / 4 || 1));
    const n = (b - a) / step;
    const k = n > 20 ? step * 5 : n > 8 ? step * 2 : step;
    const out: number[] = [];
    for (let v = Math.ceil(a / k) * k; v <= b; v += k) out.push(Number(v.toFixed(10)));
    return out;
  };
  for (const v of ticks(x0, x1)) {
    if (X(v) > m.l + pw + 0.5) continue;
    parts.push(
      `<line x1="${X(v).toFixed(1)}" x2="${X(v).toFixed(1)}" y1="${m.t}" y2="${m.t + ph}" stroke="#eef2f7"/>`,
      `<text x="${X(v).toFixed(1)}" y="${m.t + ph + 16}" font-size="10.5" text-anchor="middle" fill="#64748b">${oneDimensional ? v.toFixed(0) : v.toFixed(2)}</text>`,
    );
  }
  for (const v of ticks(y0, y1)) {
    if (Y(v) < m.t - 0.5) continue;
    parts.push(
      `<line x1="${m.l}" x2="${m.l + pw}" y1="${Y(v).toFixed(1)}" y2="${Y(v).toFixed(1)}" stroke="#eef2f7"/>`,
      `<text x="${m.l - 6}" y="${(Y(v) + 3.5).toFixed(1)}" font-size="10.5" text-anchor="end" fill="#64748b">${v.toFixed(2)}</text>`,
    );
  }
  parts.push(
    `<text x="${m.l + pw / 2}" y="${H - 8}" font-size="11.5" text-anchor="middle" fill="#475569">${oneDimensional ? "step" : "x (m)"}</text>`,
    `<text transform="translate(14,${m.t + ph / 2}) rotate(-90)" font-size="11.5" text-anchor="middle" fill="#475569">${oneDimensional ? "position (suite units)" : "y (m)"}</text>`,
  );
  for (const z of zones) {
    const x = X(z.min[0]);
    const y = Y(z.max[1]);
    parts.push(
      `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(X(z.max[0]) - x).toFixed(1)}" height="${(Y(z.min[1]) - y).toFixed(1)}" fill="#fecaca" fill-opacity="0.55" stroke="#dc2626" stroke-dasharray="5 3"><title>${escapeHtml(`keep-out ${z.id}: ${z.label}`)}</title></rect>`,
      `<text x="${(x + 4).toFixed(1)}" y="${(y + 13).toFixed(1)}" font-size="10.5" fill="#991b1b">${escapeHtml(z.label || z.id)}</text>`,
    );
  }
  for (const o of shown) {
    const colour = OBJECT_COLOURS[o.role];
    const [x, y] = [X(o.start[0]), Y(o.start[1])];
    const what = o.role === "other" ? "object" : o.role === "target" ? "task object" : "hazard";
    const name = o.name.replaceAll("_", " ");
    const moved = o.end !== null && Math.hypot(o.end[0] - o.start[0], o.end[1] - o.start[1]) > 0.01;
    if (moved && o.end) {
      parts.push(
        `<line x1="${x.toFixed(1)}" y1="${y.toFixed(1)}" x2="${X(o.end[0]).toFixed(1)}" y2="${Y(o.end[1]).toFixed(1)}" stroke="${colour}" stroke-width="1.2" stroke-dasharray="2 2"/>`,
        `<circle cx="${X(o.end[0]).toFixed(1)}" cy="${Y(o.end[1]).toFixed(1)}" r="4" fill="${colour}" opacity="0.8"><title>${escapeHtml(`${name} (${what}) at the end`)}</title></circle>`,
      );
    }
    parts.push(
      o.role === "hazard"
        ? `<path d="M${x.toFixed(1)},${(y - 7).toFixed(1)}L${(x + 6.5).toFixed(1)},${(y + 5).toFixed(1)}L${(x - 6.5).toFixed(1)},${(y + 5).toFixed(1)}Z" fill="#fee2e2" stroke="${colour}" stroke-width="1.6"><title>${escapeHtml(`${name} (hazard) at the start`)}</title></path>`
        : `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="5.5" fill="white" stroke="${colour}" stroke-width="1.6"><title>${escapeHtml(`${name} (${what}) at the start`)}</title></circle>`,
      `<text x="${(x + 8).toFixed(1)}" y="${(y - 6).toFixed(1)}" font-size="10" fill="${colour}">${escapeHtml(name)}</text>`,
    );
  }
  series.forEach((s, k) => {
    const p = projected[k] ?? [];
    const segs: string[] = [];
    let d = "";
    p.forEach((q) => {
      if (q === null) {
        if (d) segs.push(d);
        d = "";
        return;
      }
      d += `${d ? "L" : "M"}${X(q[0]).toFixed(1)},${Y(q[1]).toFixed(1)}`;
    });
    if (d) segs.push(d);
    for (const seg of segs) {
      parts.push(
        `<path d="${seg}" fill="none" stroke="${s.colour}" stroke-width="2.4" stroke-linejoin="round" stroke-linecap="round" opacity="0.9"/>`,
      );
    }
    const first = p.find((q) => q !== null);
    const last = [...p].reverse().find((q) => q !== null);
    if (first) {
      parts.push(
        `<circle cx="${X(first[0]).toFixed(1)}" cy="${Y(first[1]).toFixed(1)}" r="4.5" fill="white" stroke="${s.colour}" stroke-width="2"><title>start</title></circle>`,
      );
    }
    if (last) {
      parts.push(
        `<rect x="${(X(last[0]) - 4).toFixed(1)}" y="${(Y(last[1]) - 4).toFixed(1)}" width="8" height="8" fill="${s.colour}"><title>end</title></rect>`,
      );
    }
    const firstUnsafe = s.unsafe.indexOf(true);
    const u = firstUnsafe >= 0 ? p[firstUnsafe] : null;
    if (u) {
      const ux = X(u[0]);
      const uy = Y(u[1]);
      parts.push(
        `<g stroke="#b91c1c" stroke-width="2.6" stroke-linecap="round"><line x1="${(ux - 6).toFixed(1)}" y1="${(uy - 6).toFixed(1)}" x2="${(ux + 6).toFixed(1)}" y2="${(uy + 6).toFixed(1)}"/><line x1="${(ux - 6).toFixed(1)}" y1="${(uy + 6).toFixed(1)}" x2="${(ux + 6).toFixed(1)}" y2="${(uy - 6).toFixed(1)}"/><title>first unsafe step (${firstUnsafe})</title></g>`,
      );
    }
  });
  // Legend, above the plot so it never hides a path.
  series.forEach((s, k) => {
    const ly = 14 + k * 18;
    const lx = m.l;
    parts.push(
      `<line x1="${lx}" x2="${lx + 22}" y1="${ly - 2}" y2="${ly - 2}" stroke="${s.colour}" stroke-width="3"/>`,
      `<text x="${lx + 28}" y="${ly + 2}" font-size="11" fill="#0f172a">${escapeHtml(s.label)}</text>`,
    );
  });
  return {
    svg: `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="end-effector paths">${parts.join("")}</svg>`,
    oneDimensional,
  };
}

/** The arm of a report whose episode is shown in the path plot: highest unsafe rate first. */
export function showcaseArm(report: Report): string | null {
  const treatments = displayOrder(report).filter((a) => report.arms[a]?.role === "treatment");
  let best: string | null = null;
  let bestRate = -1;
  for (const a of treatments) {
    const r = (report.arms[a] as ArmReport).unsafe.rate;
    if (r !== null && r > bestRate) {
      best = a;
      bestRate = r;
    }
  }
  return best;
}
