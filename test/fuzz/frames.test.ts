/**
 * Frames as each server, client and the bridge decode them: openpi (msgpack, bin-keyed numpy
 * arrays), vla-eval envelopes (msgpack, PNG or raw images) and OpenVLA json-numpy bodies and
 * replies, from random bytes and from valid frames with bytes flipped, cut or spliced. Decoding
 * runs under the servers' bounds (src/policies/served/codec/limits.ts); then what each reader
 * does with the tree: a server's decodeObservation, a client's decodeActions, the bridge's
 * readObservation and judgeState under every built-in profile. Decoded or a ProvaelError.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { judgeState, readObservation } from "../../src/bridge/observation.js";
import { loadProfile } from "../../src/bridge/profile.js";
import { decodeJsonNumpy, encodeJsonNumpy } from "../../src/policies/served/codec/json-numpy.js";
import { decodeLimits } from "../../src/policies/served/codec/limits.js";
import { float32Array } from "../../src/policies/served/codec/ndarray.js";
import { decodeOpenpi, encodeOpenpi } from "../../src/policies/served/codec/openpi.js";
import { isWireMap, type WireValue } from "../../src/policies/served/codec/tree.js";
import { decodeEnvelope, encodeEnvelope } from "../../src/policies/served/codec/vla-eval.js";
import {
  decodeActions,
  decodeObservation,
  encodeObservation,
  LAYOUTS,
} from "../../src/policies/served/layouts.js";
import { fuzz, mutatedBytes, onlyProvaelErrors } from "../support/fuzz.js";

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
const limits = decodeLimits();
const profiles = ["libero", "simpler", "tabletop"].map((p) => loadProfile(p));
const vlaPayload = encodeObservation(LAYOUTS["vla-eval"]!, OBS);
const SEEDS = {
  openpi: [
    encodeOpenpi(encodeObservation(LAYOUTS.libero!, OBS, TAG)),
    encodeOpenpi({ actions: float32Array(new Float32Array(14), [2, 7]) }),
  ],
  vlaEval: [
    encodeEnvelope({ type: "observation", payload: vlaPayload, seq: 3, timestamp: 1.5 }),
    encodeEnvelope({ type: "observation", payload: vlaPayload, seq: 3, timestamp: 1.5 }, "raw"),
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

/** What a server and a client read from a decoded tree. */
function readTree(v: WireValue, layouts: string[]): void {
  for (const name of layouts) {
    const layout = LAYOUTS[name]!;
    if (isWireMap(v)) {
      onlyProvaelErrors(
        () =>
          void decodeObservation(layout, v, { imageSize: [8, 8], cameras: ["agentview", "wrist"] }),
      );
      onlyProvaelErrors(() => void decodeActions(layout, v[layout.actions.key], true));
    }
    onlyProvaelErrors(() => void decodeActions(layout, v, true));
  }
}

const raw = fc.uint8Array({ maxLength: 512 });

describe("frames: decoded by every server, client and the bridge, or a ProvaelError", () => {
  it("openpi frames (server requests and client replies)", () => {
    fuzz("openpi frames", fc.oneof(raw, mutatedBytes(SEEDS.openpi)), (b) => {
      onlyProvaelErrors(() => readTree(decodeOpenpi(b, limits), ["libero", "droid", "aloha"]));
    });
  });

  it("vla-eval envelopes (server, client and the bridge's observation and judged state)", () => {
    fuzz("vla-eval frames", fc.oneof(raw, mutatedBytes(SEEDS.vlaEval)), (b) => {
      onlyProvaelErrors(() => {
        const env = decodeEnvelope(b, limits);
        readTree(env.payload, ["vla-eval"]);
        if (!isWireMap(env.payload)) return;
        const payload = env.payload;
        for (const p of profiles) {
          onlyProvaelErrors(() => void readObservation(p, payload));
          onlyProvaelErrors(() => void judgeState(p, payload));
        }
      });
    });
  });

  it("OpenVLA json-numpy bodies (with the nested `encoded` form) and replies", () => {
    const text = fc.oneof(
      fc.string({ maxLength: 256 }),
      fc.json({ maxDepth: 4 }),
      mutatedBytes(SEEDS.json.map((s) => new TextEncoder().encode(s))).map((b) =>
        new TextDecoder().decode(b),
      ),
    );
    fuzz("json-numpy frames", text, (t) => {
      onlyProvaelErrors(() => {
        const body = decodeJsonNumpy(t, limits);
        readTree(body, ["openvla"]);
        if (isWireMap(body) && typeof body.encoded === "string")
          readTree(decodeJsonNumpy(body.encoded, limits), ["openvla"]);
      });
    });
  });
});
