import type { Command } from "commander";
import { integer } from "../config/parse.js";
import { serveSite, writeSite } from "../playground/site.js";
import { REPLAY_WORKER, writeOpenPage } from "../view/open-page.js";

export function registerPlayground(program: Command): void {
  program
    .command("playground")
    .description(
      "write the playground, a static site that plays `provael attack` in a browser (tabletop × tiny-vla in Web Workers; outcomes as the CLI's, docs/playground.md)",
    )
    .requiredOption("--out <dir>", "folder to write the site into (new, empty, or an earlier site)")
    .option("--serve", "then serve it on 127.0.0.1 until interrupted")
    .option("--port <n>", "port for --serve (default: any free one)", integer("--port", { min: 0 }))
    .action(async (flags: { out: string; serve?: boolean; port?: number }) => {
      // The open page sits in viewer/, the playground's replay worker at the site's root.
      const files = writeSite(flags.out, (dir) =>
        writeOpenPage(dir, { replayWorker: `../${REPLAY_WORKER}` }),
      );
      process.stdout.write(`wrote ${flags.out} (${files.length} files)\n`);
      if (flags.serve) {
        const { url } = await serveSite(flags.out, flags.port ?? 0);
        process.stdout.write(`serving the playground at ${url} (Ctrl-C to stop)\n`);
      }
    });
}
