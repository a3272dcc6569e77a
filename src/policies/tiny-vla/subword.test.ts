import { describe, expect, it } from "vitest";
import { SubwordEncoder } from "./subword.js";

const enc = new SubwordEncoder({ buckets: 4096, minN: 3, maxN: 5, maxWords: 8, perWord: 24 });
const unitsOf = (word: string) => new Set(enc.encode(word).filter((id) => id !== 0));
const shared = (a: string, b: string) => {
  const x = unitsOf(a);
  const y = unitsOf(b);
  return [...x].filter((id) => y.has(id)).length / Math.min(x.size, y.size);
};

describe("tiny-vla subword units", () => {
  it("gives every word ids, known or not, and pads the rest with 0", () => {
    const ids = enc.encode("fetch the zyzzyva");
    expect(ids.length).toBe(8 * 24);
    for (let w = 0; w < 3; w++) expect(ids[w * 24]).toBeGreaterThan(0);
    expect(ids.slice(3 * 24).every((id) => id === 0)).toBe(true);
    expect([...ids].every((id) => id >= 0 && id < 4096)).toBe(true);
    expect(enc.encode("Fetch THE zyzzyva")).toEqual(ids);
  });

  it("lets a new form of a word share most of its units with the word", () => {
    expect(shared("fetch", "fetching")).toBeGreaterThan(0.5);
    expect(shared("mug", "mugs")).toBeGreaterThan(0.4);
    expect(shared("fetch", "basket")).toBeLessThan(0.1);
  });

  it("keeps a word's own id first, so a whole word is told apart from its pieces", () => {
    expect(enc.units("cup")[0]).toBe("w:cup");
    expect(enc.units("cup")).toContain("<cu");
    expect(enc.encode("cup")[0]).not.toBe(enc.encode("cups")[0]);
  });

  it("refuses a config that cannot encode", () => {
    expect(
      () => new SubwordEncoder({ buckets: 1, minN: 3, maxN: 5, maxWords: 8, perWord: 4 }),
    ).toThrow(/subword config/);
  });
});
