/**
 * The training loss curve as a PNG, drawn directly with pngjs (axes, log-scale loss, ticks with
 * a 5x7 bitmap font, the training curve and the validation points), so `provael train` needs no
 * browser or plotting service.
 *
 * @example
 *   writeFileSync("loss.png", lossCurvePng(result.history, { title: "tiny-vla seed 0" }));
 */
import pngjs from "pngjs";

/** 5x7 glyphs, one string per row, '#' = ink. */
const FONT: Record<string, string[]> = {
  "0": [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "],
  "1": ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
  "2": [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"],
  "3": ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "],
  "4": ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "],
  "5": ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "],
  "6": ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "],
  "7": ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "],
  "8": [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "],
  "9": [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "],
  ".": ["     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "],
  "-": ["     ", "     ", "     ", "#####", "     ", "     ", "     "],
  "+": ["     ", "  #  ", "  #  ", "#####", "  #  ", "  #  ", "     "],
  ",": ["     ", "     ", "     ", "     ", " ##  ", "  #  ", " #   "],
  ":": ["     ", " ##  ", " ##  ", "     ", " ##  ", " ##  ", "     "],
  "(": ["   # ", "  #  ", " #   ", " #   ", " #   ", "  #  ", "   # "],
  ")": [" #   ", "  #  ", "   # ", "   # ", "   # ", "  #  ", " #   "],
  "=": ["     ", "     ", "#####", "     ", "#####", "     ", "     "],
  " ": ["     ", "     ", "     ", "     ", "     ", "     ", "     "],
  a: ["     ", "     ", " ### ", "    #", " ####", "#   #", " ####"],
  b: ["#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#### "],
  c: ["     ", "     ", " ### ", "#    ", "#    ", "#   #", " ### "],
  d: ["    #", "    #", " ## #", "#  ##", "#   #", "#   #", " ####"],
  e: ["     ", "     ", " ### ", "#   #", "#####", "#    ", " ### "],
  f: ["  ## ", " #  #", " #   ", "###  ", " #   ", " #   ", " #   "],
  g: ["     ", " ####", "#   #", "#   #", " ####", "    #", " ### "],
  h: ["#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#   #"],
  i: ["  #  ", "     ", " ##  ", "  #  ", "  #  ", "  #  ", " ### "],
  k: ["#    ", "#    ", "#  # ", "# #  ", "##   ", "# #  ", "#  # "],
  l: [" ##  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
  m: ["     ", "     ", "## # ", "# # #", "# # #", "#   #", "#   #"],
  n: ["     ", "     ", "# ## ", "##  #", "#   #", "#   #", "#   #"],
  o: ["     ", "     ", " ### ", "#   #", "#   #", "#   #", " ### "],
  p: ["     ", "     ", "#### ", "#   #", "#### ", "#    ", "#    "],
  r: ["     ", "     ", "# ## ", "##  #", "#    ", "#    ", "#    "],
  s: ["     ", "     ", " ####", "#    ", " ### ", "    #", "#### "],
  t: [" #   ", " #   ", "###  ", " #   ", " #   ", " #  #", "  ## "],
  u: ["     ", "     ", "#   #", "#   #", "#   #", "#  ##", " ## #"],
  v: ["     ", "     ", "#   #", "#   #", "#   #", " # # ", "  #  "],
  w: ["     ", "     ", "#   #", "#   #", "# # #", "# # #", " # # "],
  x: ["     ", "     ", "#   #", " # # ", "  #  ", " # # ", "#   #"],
  y: ["     ", "     ", "#   #", "#   #", " ####", "    #", " ### "],
};

type Rgb = [number, number, number];

class Canvas {
  readonly png: pngjs.PNG;

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.png = new pngjs.PNG({ width, height });
    this.png.data.fill(255);
  }

  set(x: number, y: number, c: Rgb): void {
    const xi = Math.round(x);
    const yi = Math.round(y);
    if (xi < 0 || yi < 0 || xi >= this.width || yi >= this.height) return;
    const i = 4 * (yi * this.width + xi);
    this.png.data[i] = c[0];
    this.png.data[i + 1] = c[1];
    this.png.data[i + 2] = c[2];
    this.png.data[i + 3] = 255;
  }

  /** A line by stepping along its longer axis, `thick` pixels wide. */
  line(x0: number, y0: number, x1: number, y1: number, c: Rgb, thick = 1): void {
    const n = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
    for (let k = 0; k <= n; k++) {
      const x = x0 + ((x1 - x0) * k) / n;
      const y = y0 + ((y1 - y0) * k) / n;
      for (let dx = 0; dx < thick; dx++)
        for (let dy = 0; dy < thick; dy++) this.set(x + dx, y + dy, c);
    }
  }

  text(x: number, y: number, s: string, c: Rgb, align: "left" | "right" | "center" = "left"): void {
    const w = s.length * 6;
    let cx = align === "right" ? x - w : align === "center" ? x - w / 2 : x;
    for (const ch of s) {
      const g = FONT[ch] ?? FONT[ch.toLowerCase()] ?? FONT[" "];
      g?.forEach((row, gy) => {
        for (let gx = 0; gx < row.length; gx++) if (row[gx] === "#") this.set(cx + gx, y + gy, c);
      });
      cx += 6;
    }
  }

  /** Text rotated a quarter turn (reads bottom to top), for the y-axis label. */
  textUp(x: number, y: number, s: string, c: Rgb): void {
    let cy = y + (s.length * 6) / 2;
    for (const ch of s) {
      const g = FONT[ch] ?? FONT[" "];
      g?.forEach((row, gy) => {
        for (let gx = 0; gx < row.length; gx++) if (row[gx] === "#") this.set(x + gy, cy - gx, c);
      });
      cy -= 6;
    }
  }
}

export interface CurvePoint {
  step: number;
  loss: number;
  validation?: number;
}

function tickLabel(v: number): string {
  if (v >= 1000 || v < 0.001) return v.toExponential(0).replace("e-", "e-").replace("e+", "e");
  return String(Number(v.toPrecision(2)));
}

/** PNG bytes of the loss curve (log-scale loss against step). */
export function lossCurvePng(
  history: readonly CurvePoint[],
  options: { title?: string; width?: number; height?: number } = {},
): Buffer {
  const W = options.width ?? 720;
  const H = options.height ?? 420;
  const cv = new Canvas(W, H);
  const left = 70;
  const right = W - 20;
  const top = 36;
  const bottom = H - 50;
  const black: Rgb = [30, 30, 30];
  const grey: Rgb = [225, 225, 225];
  const blue: Rgb = [31, 119, 180];
  const orange: Rgb = [230, 120, 20];
  const values = history
    .flatMap((h) => [h.loss, ...(h.validation === undefined ? [] : [h.validation])])
    .filter((v) => v > 0 && Number.isFinite(v));
  const lo = Math.log10(Math.min(...values, 1));
  const hi = Math.log10(Math.max(...values, 1e-3));
  const yMin = Math.floor(lo);
  const yMax = Math.max(yMin + 1, Math.ceil(hi));
  const maxStep = Math.max(1, ...history.map((h) => h.step));
  const X = (s: number) => left + ((right - left) * s) / maxStep;
  const Y = (v: number) =>
    bottom - ((bottom - top) * (Math.log10(Math.max(v, 10 ** yMin)) - yMin)) / (yMax - yMin);

  // Grid and y ticks at 1, 2 and 5 per decade.
  for (let d = yMin; d <= yMax; d++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** d;
      if (Math.log10(v) > yMax + 1e-9) continue;
      const y = Y(v);
      cv.line(left, y, right, y, grey);
      cv.line(left - 4, y, left, y, black);
      cv.text(left - 7, y - 3, tickLabel(v), black, "right");
    }
  }
  const stepTick = 10 ** Math.floor(Math.log10(maxStep));
  const unit =
    maxStep / stepTick >= 5 ? stepTick : maxStep / stepTick >= 2 ? stepTick / 2 : stepTick / 5;
  for (let s = 0; s <= maxStep + 1e-9; s += unit) {
    const x = X(s);
    cv.line(x, top, x, bottom, grey);
    cv.line(x, bottom, x, bottom + 4, black);
    cv.text(x, bottom + 9, String(Math.round(s)), black, "center");
  }
  cv.line(left, top, left, bottom, black);
  cv.line(left, bottom, right, bottom, black);
  cv.text((left + right) / 2, H - 18, "step", black, "center");
  cv.textUp(14, (top + bottom) / 2, "loss (log)", black);
  if (options.title) cv.text((left + right) / 2, 12, options.title, black, "center");

  let prev: [number, number] | undefined;
  for (const h of history) {
    const p: [number, number] = [X(h.step), Y(h.loss)];
    if (prev) cv.line(prev[0], prev[1], p[0], p[1], blue, 2);
    prev = p;
  }
  for (const h of history) {
    if (h.validation === undefined) continue;
    const x = X(h.step);
    const y = Y(h.validation);
    for (let dx = -2; dx <= 2; dx++)
      for (let dy = -2; dy <= 2; dy++) cv.set(x + dx, y + dy, orange);
  }
  // Legend.
  cv.line(right - 150, top + 8, right - 130, top + 8, blue, 2);
  cv.text(right - 124, top + 5, "train", black);
  if (history.some((h) => h.validation !== undefined)) {
    for (let dx = -2; dx <= 2; dx++)
      for (let dy = -2; dy <= 2; dy++) cv.set(right - 140 + dx, top + 22 + dy, orange);
    cv.text(right - 124, top + 19, "validation", black);
  }
  return pngjs.PNG.sync.write(cv.png, { colorType: 2 });
}
