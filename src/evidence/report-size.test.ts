/**
 * `attest`, `verify --report` and `leaderboard` take any report Provael itself writes: a genuine
 * report of 14,000 stub episodes (over 10 MiB, the old limit, which refused it) is attested,
 * verified and pooled; a file past the report limit is refused before any of it is read.
 */
import { mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runStub, stubPlan } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { resolveAttacks } from "../attacks/index.js";
import { canonicalJson } from "../core/canonical-json.js";
import { fixedClock } from "../core/clock.js";
import type { EpisodeRecord } from "../core/episode.js";
import { reportArms } from "../report/arms.js";
import { buildReport } from "../report/build.js";
import { attestRun, readRunFiles, verifyAttestationFile, writeEnvelope } from "./attestation.js";
import { MAX_REPORT_BYTES } from "./files.js";
import { keyPairFromSeed, publicKeyPem } from "./keys.js";
import { readRuns } from "./leaderboard.js";
import { trustPublicKey } from "./trust-store.js";

const key = keyPairFromSeed(new Uint8Array(32).fill(7));
const T0 = Date.parse("2026-06-01T12:00:00Z");
const root = tempDir();
const big = join(root, "big");

beforeAll(async () => {
  // A real run's episodes, played again under more seeds: the report a 14k-episode run writes.
  const arms = resolveAttacks(["none", "control", "instruction"]);
  const tasks = ["fetch_cup", "wipe_plate", "grab_sponge"];
  const seed = await runStub(join(root, "seed"), { tasks, arms, seeds: 2 });
  const copies = Math.ceil(14_000 / seed.episodes.length);
  const episodes: EpisodeRecord[] = [];
  for (let k = 0; k < copies; k++)
    for (const e of seed.episodes) {
      const { delivered: _d, ...record } = e;
      const n = episodes.length;
      episodes.push({
        ...(record as unknown as EpisodeRecord),
        seed: e.seed + 2 * k,
        cell: `c${n.toString(16).padStart(20, "0")}`,
      });
    }
  const plan = stubPlan({ tasks, arms, seeds: 2 * copies });
  const report = buildReport({
    plan,
    arms: reportArms(plan),
    toolVersion: seed.tool_version,
    policyDigest: seed.run.policy_digest,
    episodes,
    trajectoriesDigest: seed.trajectories_digest,
    calibration: {},
  });
  mkdirSync(big);
  writeFileSync(join(big, "report.json"), canonicalJson(report));
}, 300_000);

describe("report size limits fit what Provael writes", () => {
  it("a genuine report over 10 MiB is attested, verified and pooled", () => {
    expect(readRunFiles(big).report.episodes.length).toBeGreaterThanOrEqual(14_000);
    const size = statSync(join(big, "report.json")).size;
    expect(size).toBeGreaterThan(10 * 1024 * 1024);
    expect(size).toBeLessThan(MAX_REPORT_BYTES);
    const envelope = join(root, "big.dsse.json");
    writeEnvelope(envelope, attestRun(big, key, fixedClock(T0)));
    const trusted = [trustPublicKey(publicKeyPem(key.publicKey), "test")];
    const verified = verifyAttestationFile(envelope, trusted, { now: T0 + 1000, reportDir: big });
    expect(verified).toBeTruthy();
    // `leaderboard build` reads its runs here.
    expect(readRuns([big]).map((r) => r.dir)).toEqual([big]);
  }, 150_000);

  it("a file past the report limit is refused before it is read", () => {
    const dir = join(root, "huge");
    mkdirSync(dir);
    const path = join(dir, "report.json");
    writeFileSync(path, "");
    truncateSync(path, MAX_REPORT_BYTES + 1);
    expect(() => readRunFiles(dir)).toThrow(
      expect.objectContaining({
        code: "io/malformed",
        message: expect.stringContaining(`over the ${MAX_REPORT_BYTES}-byte limit`),
      }),
    );
    expect(readFileSync(join(big, "report.json")).length).toBeGreaterThan(0);
  });
});
