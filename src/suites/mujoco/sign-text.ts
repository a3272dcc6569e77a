/**
 * Text on in-scene signs (scene edits of kind "sign"): a 5x7 bitmap font drawn onto the sign's
 * two large faces by the ray camera's surface shader, so an injected sentence is actually visible
 * to a camera-reading policy. Upper-case letters, digits and a little punctuation; anything else
 * is drawn as a space.
 */
import type { SurfaceShader } from "./camera.js";

/** Glyph rows, top to bottom; bit 4 is the leftmost of five columns. */
const GLYPHS: Record<string, readonly number[]> = {
  A: [14, 17, 17, 31, 17, 17, 17],
  B: [30, 17, 17, 30, 17, 17, 30],
  C: [14, 17, 16, 16, 16, 17, 14],
  D: [30, 17, 17, 17, 17, 17, 30],
  E: [31, 16, 16, 30, 16, 16, 31],
  F: [31, 16, 16, 30, 16, 16, 16],
  G: [14, 17, 16, 23, 17, 17, 15],
  H: [17, 17, 17, 31, 17, 17, 17],
  I: [14, 4, 4, 4, 4, 4, 14],
  J: [7, 2, 2, 2, 2, 18, 12],
  K: [17, 18, 20, 24, 20, 18, 17],
  L: [16, 16, 16, 16, 16, 16, 31],
  M: [17, 27, 21, 21, 17, 17, 17],
  N: [17, 17, 25, 21, 19, 17, 17],
  O: [14, 17, 17, 17, 17, 17, 14],
  P: [30, 17, 17, 30, 16, 16, 16],
  Q: [14, 17, 17, 17, 21, 18, 13],
  R: [30, 17, 17, 30, 20, 18, 17],
  S: [15, 16, 16, 14, 1, 1, 30],
  T: [31, 4, 4, 4, 4, 4, 4],
  U: [17, 17, 17, 17, 17, 17, 14],
  V: [17, 17, 17, 17, 17, 10, 4],
  W: [17, 17, 17, 21, 21, 21, 10],
  X: [17, 17, 10, 4, 10, 17, 17],
  Y: [17, 17, 10, 4, 4, 4, 4],
  Z: [31, 1, 2, 4, 8, 16, 31],
  "0": [14, 17, 19, 21, 25, 17, 14],
  "1": [4, 12, 4, 4, 4, 4, 14],
  "2": [14, 17, 1, 2, 4, 8, 31],
  "3": [30, 1, 1, 14, 1, 1, 30],
  "4": [2, 6, 10, 18, 31, 2, 2],
  "5": [31, 16, 30, 1, 1, 17, 14],
  "6": [14, 16, 16, 30, 17, 17, 14],
  "7": [31, 1, 2, 4, 8, 8, 8],
  "8": [14, 17, 17, 14, 17, 17, 14],
  "9": [14, 17, 17, 15, 1, 1, 14],
  ".": [0, 0, 0, 0, 0, 12, 12],
  ",": [0, 0, 0, 0, 12, 4, 8],
  "!": [4, 4, 4, 4, 4, 0, 4],
  "?": [14, 17, 1, 2, 4, 0, 4],
  "-": [0, 0, 0, 14, 0, 0, 0],
  ":": [0, 12, 12, 0, 12, 12, 0],
  "'": [4, 4, 8, 0, 0, 0, 0],
  "/": [1, 1, 2, 4, 8, 16, 16],
};

/** A glyph cell: 5 columns plus 1 of spacing, 7 rows plus 1 of spacing. */
const CELL_W = 6;
const CELL_H = 8;

/** Greedy word wrap to at most `width` characters per line (long words are cut). */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    for (let rest = word; rest.length > 0; ) {
      const piece = rest.slice(0, width);
      rest = rest.slice(width);
      if (line.length === 0) line = piece;
      else if (line.length + 1 + piece.length <= width) line += ` ${piece}`;
      else {
        lines.push(line);
        line = piece;
      }
    }
  }
  if (line.length > 0) lines.push(line);
  return lines;
}

/** Lines of text laid out to be as large as possible on a panel of the given aspect. */
export function layoutText(text: string, aspect: number): string[] {
  const clean = text.toUpperCase();
  const longest = Math.max(1, ...clean.split(/\s+/).map((w) => w.length));
  let best: string[] = [clean];
  let bestScale = 0;
  for (
    let width = Math.min(longest, 40);
    width <= Math.max(longest, Math.min(clean.length, 60));
    width++
  ) {
    const lines = wrapText(clean, width);
    const cols = Math.max(...lines.map((l) => l.length)) * CELL_W + 2;
    const rows = lines.length * CELL_H + 2;
    const scale = Math.min(aspect / cols, 1 / rows);
    if (scale > bestScale) {
      bestScale = scale;
      best = lines;
    }
  }
  return best;
}

/**
 * A surface shader writing `text` in dark ink on the two large faces (local ±y) of a sign box
 * with half sizes `hw` (local x), `thickness` (local y) and `hh` (local z).
 */
export function signShader(text: string, hw: number, hh: number, thickness: number): SurfaceShader {
  const lines = layoutText(text, hw / hh);
  const cols = Math.max(1, ...lines.map((l) => l.length)) * CELL_W + 2;
  const rows = lines.length * CELL_H + 2;
  // Pixels per unit of u and v, equal in metres so glyphs keep their shape.
  const scale = Math.min((2 * hw) / cols, (2 * hh) / rows);
  const offsetX = (2 * hw - cols * scale) / 2;
  const offsetY = (2 * hh - rows * scale) / 2;
  const ink = [0.05, 0.05, 0.08];
  return (u, v, local) => {
    if (Math.abs(local[1] ?? 0) < thickness * 0.5) return null;
    const px = Math.floor((u * 2 * hw - offsetX) / scale) - 1;
    const py = Math.floor((v * 2 * hh - offsetY) / scale) - 1;
    if (px < 0 || py < 0) return null;
    const line = lines[Math.floor(py / CELL_H)];
    const ch = line?.[Math.floor(px / CELL_W)];
    const glyph = ch === undefined ? undefined : GLYPHS[ch];
    const gx = px % CELL_W;
    const gy = py % CELL_H;
    if (!glyph || gx > 4 || gy > 6) return null;
    return ((glyph[gy] ?? 0) >> (4 - gx)) & 1 ? ink : null;
  };
}
