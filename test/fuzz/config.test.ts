/**
 * Calibration files (`--calib`) and acceptance protocol files (`--protocol`), fuzzed through the
 * loaders the CLI uses: valid files with structural edits or mutated bytes. Each is refused with
 * a ProvaelError or loaded, and what loads is then used (the calibrated predicate judges states,
 * the protocol decides a verdict) without any other exception.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, it } from "vitest";
import { loadAcceptance } from "../../src/config/acceptance.js";
import { Rng } from "../../src/core/rng.js";
import type { Vec3 } from "../../src/core/types.js";
import { calibratedPredicate, fitCalibration } from "../../src/judges/calibrate.js";
import { decide } from "../../src/report/verdict.js";
import { loadCalibrations } from "../../src/runner/calibration.js";
import { fuzz, mutatedBytes, mutatedJson, onlyProvaelErrors } from "../support/fuzz.js";
import { runStub } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

const root = tempDir();
const HAZARD: Vec3 = [0.3, 0, 0.8];
const rng = Rng.fromLabel("fuzz-calibration");
const calibration = fitCalibration({
  task: "fetch_cup",
  suite: "stub",
  policy: "stub",
  policyDigest: null,
  toolVersion: "0",
  targetFpr: 0.1,
  hazardPos: HAZARD,
  episodes: Array.from({ length: 60 }, (_, i) => ({
    seed: 1000 + i,
    scene: 1000 + i,
    positions: [[HAZARD[0] - 0.05 - rng.uniform(0, 0.1), 0, HAZARD[2]] as Vec3],
  })),
});
const report = await runStub(join(root, "run"), { tasks: ["fetch_cup"], seeds: 2 });
const enc = new TextEncoder();
const fileBytes = (a: fc.Arbitrary<unknown>) => a.map((v) => enc.encode(JSON.stringify(v)));
const states = fc.record(
  {
    eefPos: fc.tuple(fc.double(), fc.double(), fc.double()),
    gripper: fc.double(),
    scalars: fc.dictionary(fc.string({ maxLength: 4 }), fc.double(), { maxKeys: 2 }),
  },
  { requiredKeys: [] },
);

let n = 0;
/** Writes `bytes` as the only file of a fresh directory (the loaders read files). */
function asFile(name: string, bytes: Uint8Array): string {
  const dir = join(root, `f${n++}`);
  mkdirSync(dir);
  writeFileSync(join(dir, name), bytes);
  return dir;
}

describe("calibration and protocol files: loaded and usable, or a ProvaelError", () => {
  it("calibration files (--calib)", () => {
    const seed = enc.encode(JSON.stringify(calibration));
    const input = fc.tuple(
      fc.oneof(
        { weight: 3, arbitrary: fileBytes(mutatedJson(calibration)) },
        { weight: 1, arbitrary: mutatedBytes([seed]) },
      ),
      fc.array(states, { maxLength: 3 }),
    );
    fuzz("calibration files", input, ([bytes, probe]) => {
      const dir = asFile("fetch_cup.calibration.json", bytes);
      onlyProvaelErrors(() => {
        const loaded = loadCalibrations(dir);
        for (const c of Object.values(loaded)) {
          const p = calibratedPredicate(c.calibration);
          for (const s of probe) onlyProvaelErrors(() => void p.evaluate(s as never));
        }
      });
    });
  });

  it("acceptance protocol files (--protocol), YAML and JSON", () => {
    const yaml = readFileSync("examples/protocols/release-gate.yaml");
    const json = readFileSync("examples/protocols/smoke.json");
    const input = fc.oneof(
      { weight: 3, arbitrary: fileBytes(mutatedJson(JSON.parse(json.toString("utf8")))) },
      { weight: 2, arbitrary: mutatedBytes([yaml, json]) },
      { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((t) => enc.encode(t)) },
    );
    fuzz("protocol files", input, (bytes) => {
      const dir = asFile("protocol.yaml", bytes);
      onlyProvaelErrors(() => void decide(report, loadAcceptance(join(dir, "protocol.yaml"))));
    });
  });
});
