/// <reference lib="dom" />
/** The instruction as the arm changed it: a word-level diff (longest common subsequence). */
import { h } from "./dom.js";

export function wordDiff(a: string, b: string): HTMLElement {
  const x = a.split(/(\s+)/);
  const y = b.split(/(\s+)/);
  const n = x.length;
  const m = y.length;
  // L[i][j]: the longest common subsequence of x[i..] and y[j..].
  const L: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  const at = (i: number, j: number) => (L[i] as number[])[j] as number;
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      (L[i] as number[])[j] =
        x[i] === y[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
  const out = h("div", { class: "diff", id: "instruction-diff" });
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      out.append(x[i] as string);
      i++;
      j++;
    } else if (j < m && (i >= n || at(i, j + 1) >= at(i + 1, j))) {
      out.append(h("ins", {}, y[j] as string));
      j++;
    } else {
      out.append(h("del", {}, x[i] as string));
      i++;
    }
  }
  return out;
}
