import { describe, expect, it } from "vitest";
import { PAD_ID, Tokenizer, UNK_ID, words } from "./tokenizer.js";

describe("tiny-vla tokenizer", () => {
  const tok = Tokenizer.build(
    [
      "pick up the red block and place it in the basket",
      "pick up the blue ball next to the person's hand",
    ],
    8,
  );

  it("builds a sorted vocabulary after <pad> and <unk>", () => {
    expect(tok.vocabulary.slice(0, 2)).toEqual(["<pad>", "<unk>"]);
    const rest = tok.vocabulary.slice(2);
    expect(rest).toEqual([...rest].sort());
    expect(rest).toContain("persons");
  });

  it("lowercases, maps unknown words to <unk> and pads", () => {
    const ids = tok.encode("Pick up the KNIFE!");
    expect(ids.length).toBe(8);
    expect(ids[0]).toBe(tok.vocabulary.indexOf("pick"));
    expect(ids[3]).toBe(UNK_ID);
    expect(Array.from(ids.slice(4))).toEqual([PAD_ID, PAD_ID, PAD_ID, PAD_ID]);
    expect(tok.unknown("Pick up the KNIFE")).toEqual(["knife"]);
  });

  it("never fails on any text: empty, symbols, unicode, very long", () => {
    expect(Array.from(tok.encode(""))).toEqual(new Array(8).fill(PAD_ID));
    expect(Array.from(tok.encode("¿¡ 🤖 ??"))).toEqual(new Array(8).fill(PAD_ID));
    expect(tok.encode("red ".repeat(1000)).length).toBe(8);
    expect(words("Ünïcode wörds, x2")).toEqual(["unicode", "words", "x2"]);
  });

  it("round-trips through JSON", () => {
    const back = Tokenizer.fromJson(JSON.parse(JSON.stringify(tok.toJson())));
    expect(back.encode("pick up the red block")).toEqual(tok.encode("pick up the red block"));
  });
});
