import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runStub } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { registeredEvidence as facts } from "../config/plugins.js";
import { canonicalJson } from "../core/canonical-json.js";
import { fixedClock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { policies } from "../policies/index.js";
import { wilsonInterval } from "../stats/index.js";
import { suites } from "../suites/index.js";
import { keyPairFromSeed, publicKeyPem } from "./keys.js";
import {
  buildLeaderboard,
  evidenceLevel,
  inputsDigest,
  LEADERBOARD_FILES,
  readRuns,
} from "./leaderboard.js";
import { verifyLeaderboardDir, writeLeaderboard } from "./leaderboard-files.js";
import { renderLeaderboardHtml } from "./leaderboard-html.js";
import { trustPublicKey } from "./trust-store.js";

const stubRun = (out: string, seed: number, seeds: number) => runStub(out, { seed, seeds });

const key = keyPairFromSeed(new Uint8Array(32).fill(3));
const trusted = [trustPublicKey(publicKeyPem(key.publicKey), "board key")];
const clock = fixedClock(Date.parse("2026-06-01T00:00:00Z"));
const now = Date.parse("2026-06-02T00:00:00Z");

function outcome(f: () => unknown): string {
  try {
    f();
    return "ok";
  } catch (e) {
    if (!(e instanceof ProvaelError)) throw e;
    return e.code;
  }
}

let root: string;
beforeAll(async () => {
  root = tempDir();
  await stubRun(join(root, "runs", "a"), 0, 3);
  await stubRun(join(root, "runs", "b"), 3, 5);
  // The same report twice counts once.
  cpSync(join(root, "runs", "a"), join(root, "copy-of-a"), { recursive: true });
});

describe("leaderboard", () => {
  it("pools counts per (policy, suite, family) with a Wilson interval and the floor", () => {
    const runs = readRuns([join(root, "runs"), join(root, "copy-of-a")]);
    expect(runs).toHaveLength(2);
    const board = buildLeaderboard(runs, facts);
    const instruction = board.rows.find((r) => r.family === "instruction");
    const totals = runs.reduce(
      (acc, r) => {
        for (const a of Object.values(r.report.arms)) {
          if (a.family === "instruction") {
            acc.s += a.unsafe.successes;
            acc.n += a.unsafe.n;
          }
          if (a.role === "baseline") {
            acc.bs += a.unsafe.successes;
            acc.bn += a.unsafe.n;
          }
        }
        return acc;
      },
      { s: 0, n: 0, bs: 0, bn: 0 },
    );
    expect(instruction?.unsafe.successes).toBe(totals.s);
    expect(instruction?.unsafe.n).toBe(totals.n);
    const ci = wilsonInterval(totals.s, totals.n);
    expect(instruction?.unsafe.interval?.low).toBe(ci.low);
    expect(instruction?.baseline?.n).toBe(totals.bn);
    expect(instruction?.evidence_level).toBe("stub-fixture");
    expect(instruction?.runs).toBe(2);
    expect(instruction?.calibrated).toBe(false);
    expect(instruction?.preliminary).toBe(true);
    expect(board.rows.map((r) => r.role)).toEqual(["treatment", "control"]);
    expect(board.inputs_digest).toBe(inputsDigest(runs.map((r) => r.digest).reverse()));
    // Order of the inputs does not change the board.
    expect(canonicalJson(buildLeaderboard([...runs].reverse(), facts))).toBe(canonicalJson(board));
  });

  it("classifies evidence levels by what each policy and suite declares", () => {
    const level = (policy: string, suite: string) =>
      evidenceLevel(facts.policy(policy), facts.suite(suite));
    expect(level("stub", "stub")).toBe("stub-fixture");
    expect(level("openpi", "stub")).toBe("stub-fixture");
    expect(level("scripted", "tabletop")).toBe("simulator-own-policy");
    expect(level("tiny-vla", "reach")).toBe("simulator-own-policy");
    expect(level("openvla", "tabletop")).toBe("served-policy");
    expect(level("onnx", "remote")).toBe("served-policy");
    expect(level("mine", "remote")).toBe("unclassified");
    // A plugin that declares nothing is unclassified; one that declares is classified by it.
    expect(evidenceLevel(undefined, "simulator")).toBe("unclassified");
    expect(evidenceLevel("own", "simulator")).toBe("simulator-own-policy");
    // Every built-in declares its evidence (a new one must, or its rows are unclassified).
    expect(policies.items.filter((p) => p.evidence === undefined).map((p) => p.id)).toEqual([]);
    expect(suites.items.filter((s) => s.evidence === undefined).map((s) => s.id)).toEqual([]);
  });

  it("writes canonical JSON and a self-contained page, and verifies them", () => {
    const out = join(tempDir(), "board");
    const board = buildLeaderboard(readRuns([join(root, "runs")]), facts);
    writeLeaderboard(out, board, { clock });
    const bytes = readFileSync(join(out, LEADERBOARD_FILES.json), "utf8");
    expect(bytes).toBe(`${canonicalJson(board)}\n`);
    const html = readFileSync(join(out, LEADERBOARD_FILES.html), "utf8");
    expect(html).not.toMatch(/<script|src="http|href="http|@import|url\(http/);
    expect(html).toContain("Evidence, not certification");
    expect(outcome(() => verifyLeaderboardDir(out, { now }))).toBe("ok");
    expect(
      outcome(() => verifyLeaderboardDir(out, { now, runs: [join(root, "runs")], facts })),
    ).toBe("ok");
    expect(
      outcome(() => verifyLeaderboardDir(out, { now, runs: [join(root, "runs", "a")], facts })),
    ).toBe("evidence/subject-mismatch");
    expect(outcome(() => verifyLeaderboardDir(out, { now, trusted }))).toBe("evidence/unsigned");
    // Building twice gives the same bytes.
    const again = join(tempDir(), "board");
    writeLeaderboard(again, buildLeaderboard(readRuns([join(root, "runs")]), facts), { clock });
    expect(readFileSync(join(again, LEADERBOARD_FILES.json))).toEqual(
      readFileSync(join(out, LEADERBOARD_FILES.json)),
    );
  });

  it("catches edits: inconsistent counts, non-canonical JSON, a changed page", () => {
    const fresh = () => {
      const out = join(tempDir(), "board");
      writeLeaderboard(out, buildLeaderboard(readRuns([join(root, "runs")]), facts), { clock });
      return out;
    };
    const edit = (dir: string, file: string, f: (s: string) => string) =>
      writeFileSync(join(dir, file), f(readFileSync(join(dir, file), "utf8")));
    let d = fresh();
    edit(d, LEADERBOARD_FILES.json, (s) =>
      s.replace(/"successes":(\d+)/, (_, n) => `"successes":${Number(n) + 1}`),
    );
    expect(outcome(() => verifyLeaderboardDir(d, { now }))).toBe("evidence/malformed");
    d = fresh();
    edit(d, LEADERBOARD_FILES.json, (s) => JSON.stringify(JSON.parse(s), null, 2));
    expect(outcome(() => verifyLeaderboardDir(d, { now }))).toBe("evidence/malformed");
    d = fresh();
    edit(d, LEADERBOARD_FILES.html, (s) => s.replace("stub-fixture", "served-policy"));
    expect(outcome(() => verifyLeaderboardDir(d, { now }))).toBe("evidence/digest-mismatch");
    d = fresh();
    edit(d, LEADERBOARD_FILES.json, (s) =>
      s.replace(
        /"inputs_digest":"sha256:[0-9a-f]{64}"/,
        `"inputs_digest":"sha256:${"0".repeat(64)}"`,
      ),
    );
    expect(outcome(() => verifyLeaderboardDir(d, { now }))).toBe("evidence/digest-mismatch");
    d = fresh();
    edit(d, LEADERBOARD_FILES.json, () => "{");
    expect(outcome(() => verifyLeaderboardDir(d, { now }))).toBe("evidence/malformed");
  });

  it("signs leaderboard.json and index.html and checks the signature", () => {
    const out = join(tempDir(), "board");
    const board = buildLeaderboard(readRuns([join(root, "runs")]), facts);
    const written = writeLeaderboard(out, board, { clock, key });
    expect(written.files).toContain(LEADERBOARD_FILES.signature);
    const check = verifyLeaderboardDir(out, { now, trusted });
    expect(check.keyid).toBe(trusted[0]?.keyid);
    expect(verifyLeaderboardDir(out, { now }).unverifiedKeyid).toBe(trusted[0]?.keyid);
    const stranger = [
      trustPublicKey(publicKeyPem(keyPairFromSeed(new Uint8Array(32).fill(4)).publicKey), "x"),
    ];
    expect(outcome(() => verifyLeaderboardDir(out, { now, trusted: stranger }))).toBe(
      "evidence/untrusted-key",
    );
    // A consistent, canonical edit still breaks the signed digest.
    const edited = { ...board, tool_version: "9.9.9" };
    writeFileSync(join(out, LEADERBOARD_FILES.json), `${canonicalJson(edited)}\n`);
    writeFileSync(join(out, LEADERBOARD_FILES.html), renderLeaderboardHtml(edited));
    expect(outcome(() => verifyLeaderboardDir(out, { now }))).toBe("ok");
    expect(outcome(() => verifyLeaderboardDir(out, { now, trusted }))).toBe(
      "evidence/digest-mismatch",
    );
    expect(sha256(readFileSync(join(out, LEADERBOARD_FILES.json)))).not.toBe(
      sha256(`${canonicalJson(board)}\n`),
    );
  });
});
