import { Help } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram, COMMANDS } from "./commands.js";

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
