/**
 * Property-based fuzzing of every frame decoder a server or client runs on a peer's bytes:
 * openpi and vla-eval msgpack, OpenVLA json-numpy, then what the servers (decodeObservation) and
 * clients (decodeActions) read from the decoded tree. The property: each input either decodes or
 * throws a ProvaelError; never another exception (a TypeError, a RangeError, out of memory).
 * Inputs are random bytes, random JSON text, and valid frames with bytes flipped, cut or spliced.
 * `FUZZ_RUNS` sets the cases per property (default 200 here; scripts/fuzz-frames.mjs runs more).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mutatedBytes } from "../../../../test/support/fuzz.js";
import { ProvaelError } from "../../../core/errors.js";
import { decodeActions, decodeObservation, encodeObservation, LAYOUTS } from "../layouts.js";
import { decodeJsonNumpy, encodeJsonNumpy } from "./json-numpy.js";
import { decodeMsgpack } from "./msgpack.js";
import { float32Array } from "./ndarray.js";
import { decodeOpenpi, encodeOpenpi } from "./openpi.js";
import { isWireMap, type WireValue } from "./tree.js";
import { decodeEnvelope, encodeEnvelope } from "./vla-eval.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 16);

const image = (w: number, h: number) => ({
  width: w,
  height: h,
  channels: 3,
  data: Uint8Array.from({ length: w * h * 3 }, (_, i) => (i * 37) % 256),
});
const OBS = {
  images: { agentview: image(8, 8), wrist: image(8, 8) },
  state: Float32Array.of(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
  instruction: "put the bowl on the plate",
};
const TAG = { id: "ep-1", episode: { task: "fetch_cup", seed: 1, policySeed: 2 } };

/** Valid frames of each kind, the seeds of the mutations. */
const SEEDS = {
  openpi: [
    encodeOpenpi(encodeObservation(LAYOUTS.libero!, OBS, TAG)),
    encodeOpenpi({ actions: float32Array(new Float32Array(14), [2, 7]) }),
  ],
  vlaEval: [
    encodeEnvelope({
      type: "observation",
      payload: encodeObservation(LAYOUTS["vla-eval"]!, OBS),
      seq: 3,
      timestamp: 1.5,
    }),
    encodeEnvelope({
      type: "action",
      payload: { actions: float32Array(new Float32Array(7), [7]) },
      seq: 3,
      timestamp: 1.5,
    }),
  ],
  json: [
    encodeJsonNumpy(encodeObservation(LAYOUTS.openvla!, OBS, TAG)),
    encodeJsonNumpy(float32Array(new Float32Array(7), [7])),
  ],
};

/** Runs `fn`; an exception that is not a ProvaelError fails the property. */
function onlyProvaelErrors(fn: () => void): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ProvaelError)) throw e;
  }
}

/** What a server and a client do with a decoded tree. */
function readTree(v: WireValue, layouts: string[]): void {
  for (const name of layouts) {
    const layout = LAYOUTS[name]!;
    if (isWireMap(v)) {
      onlyProvaelErrors(() =>
        decodeObservation(layout, v, { imageSize: [8, 8], cameras: ["agentview", "wrist"] }),
      );
      onlyProvaelErrors(() => decodeActions(layout, v[layout.actions.key], true));
    }
    onlyProvaelErrors(() => decodeActions(layout, v, true));
  }
}

const bytes = fc.oneof(fc.uint8Array({ maxLength: 512 }), mutatedBytes(SEEDS.openpi));
const options = { numRuns: RUNS, seed: SEED };

describe("frame fuzzing: decode or a ProvaelError, nothing else", () => {
  it("openpi frames (msgpack, bin-keyed arrays) and what the server and client read", () => {
    fc.assert(
      fc.property(fc.oneof(bytes, mutatedBytes(SEEDS.openpi)), (b) => {
        onlyProvaelErrors(() => decodeMsgpack(b));
        onlyProvaelErrors(() => readTree(decodeOpenpi(b), ["libero", "droid", "aloha"]));
      }),
      options,
    );
  });

  it("vla-eval envelopes (msgpack, str-keyed arrays, PNG images)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 512 }), mutatedBytes(SEEDS.vlaEval)), (b) => {
        onlyProvaelErrors(() => readTree(decodeEnvelope(b).payload, ["vla-eval"]));
      }),
      options,
    );
  });

  it("json-numpy bodies and replies (OpenVLA)", () => {
    const text = fc.oneof(
      fc.string({ maxLength: 256 }),
      fc.json({ maxDepth: 4 }),
      mutatedBytes(SEEDS.json.map((s) => new TextEncoder().encode(s))).map((b) =>
        new TextDecoder().decode(b),
      ),
    );
    fc.assert(
      fc.property(text, (t) => {
        onlyProvaelErrors(() => readTree(decodeJsonNumpy(t), ["openvla"]));
      }),
      options,
    );
  });

  it("the seeds themselves decode (the mutations start from valid frames)", () => {
    expect(isWireMap(decodeOpenpi(SEEDS.openpi[0]!))).toBe(true);
    expect(decodeEnvelope(SEEDS.vlaEval[0]!).type).toBe("observation");
    expect(isWireMap(decodeJsonNumpy(SEEDS.json[0]!))).toBe(true);
  });
});
