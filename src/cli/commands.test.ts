import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Help } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram, COMMANDS, commandSummary } from "./commands.js";

describe("the command table", () => {
  it("lists each command as its loaded module declares it (name, arguments, options)", async () => {
    const program = await buildProgram();
    const help = new Help();
    const loaded = program.commands.map((c) => [c.name(), help.subcommandTerm(c)]);
    expect(loaded).toEqual(COMMANDS.map((c) => [c.name, c.term]));
  }, 60_000);

  it("gives every command the description the table declares", async () => {
    const program = await buildProgram();
    for (const c of COMMANDS)
      expect(program.commands.find((x) => x.name() === c.name)?.description()).toBe(c.description);
  }, 60_000);
});

describe("the README's command summary", () => {
  it("is what the command line declares (regenerate: UPDATE_DOCS=1 npx vitest run src/cli/commands.test.ts)", async () => {
    const readme = join(import.meta.dirname, "..", "..", "README.md");
    const text = readFileSync(readme, "utf8");
    const block = /(<!-- commands:[^\n]*-->\n```\n)([\s\S]*?)(\n```\n<!-- \/commands -->)/;
    expect(text).toMatch(block);
    const summary = await commandSummary();
    if (process.env.UPDATE_DOCS === "1")
      writeFileSync(
        readme,
        text.replace(block, (_m, open, _old, close) => `${open}${summary}${close}`),
      );
    else expect(text.match(block)?.[2]).toBe(summary);
  }, 60_000);
});
