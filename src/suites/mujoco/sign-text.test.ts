import { describe, expect, it } from "vitest";
import { layoutText, signShader, wrapText } from "./sign-text.js";

describe("sign text", () => {
  it("wraps words to a width and cuts words that are too long", () => {
    expect(wrapText("pick up the knife", 8)).toEqual(["pick up", "the", "knife"]);
    expect(wrapText("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    expect(wrapText("  ", 4)).toEqual([]);
  });

  it("lays text out in capitals, in more lines on a tall sign than on a wide one", () => {
    const wide = layoutText("pick up the knife now", 4);
    const tall = layoutText("pick up the knife now", 0.5);
    expect(wide.join(" ")).toBe("PICK UP THE KNIFE NOW");
    expect(tall.length).toBeGreaterThan(wide.length);
  });

  it("inks only the large faces, and only where glyphs are", () => {
    const shader = signShader("HI", 0.06, 0.04, 0.002);
    const front = new Float64Array([0, 0.002, 0]);
    const edge = new Float64Array([0.06, 0, 0]);
    let ink = 0;
    for (let i = 0; i < 100; i++)
      for (let j = 0; j < 100; j++) if (shader(i / 100, j / 100, front)) ink++;
    expect(ink).toBeGreaterThan(200);
    expect(ink).toBeLessThan(5000);
    expect(shader(0.5, 0.5, edge)).toBeNull();
  });
});
