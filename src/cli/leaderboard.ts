/** `provael leaderboard build` and `provael leaderboard verify`. */
import type { Command } from "commander";
import { registeredEvidence } from "../config/plugins.js";
import { systemClock } from "../core/clock.js";
import { ProvaelError } from "../core/errors.js";
import { buildLeaderboard, readRuns } from "../evidence/leaderboard.js";
import { verifyLeaderboardDir, writeLeaderboard } from "../evidence/leaderboard-files.js";
import { readPrivateKey, trustedKeys, withVerifyExit } from "./attest.js";

export function registerLeaderboard(program: Command): void {
  const lb = program.command("leaderboard");

  lb.command("build")
    .description("pool finished runs into leaderboard.json and a static index.html")
    .requiredOption("--runs <dirs...>", "run directories, or folders holding them")
    .requiredOption("--out <dir>", "output directory")
    .option("--sign", "sign leaderboard.json and index.html (needs --key)")
    .option("--key <pem>", "Ed25519 private key for --sign")
    .option("--json", "print JSON")
    .action(
      (flags: { runs: string[]; out: string; sign?: boolean; key?: string; json?: boolean }) => {
        if (flags.sign && flags.key === undefined) {
          throw new ProvaelError("config/invalid", "--sign needs --key", {
            hint: "create a key with `provael keygen --out DIR` and pass --key DIR/private.pem",
          });
        }
        if (!flags.sign && flags.key !== undefined) {
          throw new ProvaelError("config/invalid", "--key is only used with --sign", {
            hint: "add --sign to sign the leaderboard",
          });
        }
        const key = flags.sign ? readPrivateKey(flags.key as string) : undefined;
        const board = buildLeaderboard(readRuns(flags.runs), registeredEvidence);
        const written = writeLeaderboard(flags.out, board, {
          clock: systemClock,
          ...(key === undefined ? {} : { key }),
        });
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ ...written, rows: board.rows.length })}\n`);
          return;
        }
        process.stdout.write(
          `wrote ${written.files.join(", ")} to ${flags.out}: ${board.rows.length} rows from ${board.inputs.length} run(s)\ninputs ${board.inputs_digest}${written.keyid ? `\nsigned by ${written.keyid}` : ""}\n`,
        );
      },
    );

  lb.command("verify")
    .description(
      "check a leaderboard: canonical, self-consistent, signed (with a key), rebuildable (with --runs)",
    )
    .requiredOption("--in <dir>", "leaderboard directory")
    .option("--pubkey <pem>", "check the signature with this public key")
    .option("--trust-store <file>", "check the signature against this trust store")
    .option("--runs <dirs...>", "rebuild from these runs and compare")
    .option("--json", "print JSON")
    .action(
      async (flags: {
        in: string;
        pubkey?: string;
        trustStore?: string;
        runs?: string[];
        json?: boolean;
      }) => {
        const json = flags.json === true;
        const trusted =
          flags.pubkey === undefined && flags.trustStore === undefined
            ? undefined
            : trustedKeys(flags);
        await withVerifyExit(json, () => {
          const check = verifyLeaderboardDir(flags.in, {
            now: systemClock.now(),
            ...(trusted === undefined ? {} : { trusted }),
            ...(flags.runs === undefined ? {} : { runs: flags.runs, facts: registeredEvidence }),
          });
          if (json) {
            process.stdout.write(
              `${JSON.stringify({
                ok: true,
                inputs_digest: check.board.inputs_digest,
                rows: check.board.rows.length,
                keyid: check.keyid,
                unverified_keyid: check.unverifiedKeyid,
                rebuilt_from_runs: check.rebuiltFromRuns,
              })}\n`,
            );
            return;
          }
          const sig =
            check.keyid !== null
              ? `signature by ${check.keyid} verified`
              : check.unverifiedKeyid !== null
                ? `signed by ${check.unverifiedKeyid}, not checked (pass --pubkey or --trust-store)`
                : "unsigned";
          process.stdout.write(
            `verified: ${check.board.rows.length} rows, inputs ${check.board.inputs_digest}; ${sig}${check.rebuiltFromRuns ? "; rebuilt from the runs given: identical" : ""}\nevidence, not certification\n`,
          );
        });
      },
    );
}
