/**
 * What the bridge forwards to a vla-eval upstream: a benchmark's PNG that the arm leaves alone
 * travels on as the same bytes (decoded once, for the scene digest of the episode's first
 * frame), and is hashed as those bytes in the received-input digest; an arm that edits pixels
 * sends its pixels.
 */
import { afterEach, describe, expect, it } from "vitest";
import { sha256Stream } from "../../src/core/digest.js";
import { NdArray } from "../../src/policies/served/codec/ndarray.js";
import { EncodedImage, encodePng } from "../../src/policies/served/codec/vla-eval.js";
import {
  arm,
  bridge,
  closeOpen,
  journalled,
  Peer,
  recordingUpstream,
  records,
} from "../support/bridge.js";

afterEach(closeOpen);

const PIXELS = new Uint8Array(8 * 8 * 3).fill(7);
const STATES = [0.1, 0, 1, 0, 0, 0, 0.02, -0.02];

describe("provael bridge forwarding to a vla-eval upstream", () => {
  it("sends an untouched camera as the benchmark's PNG bytes and edited ones as pixels", async () => {
    const up = await recordingUpstream();
    const { b, out } = await bridge("vla-eval", ["none", "roleplay", "placebo_patch"], {}, up.url);
    for (const a of ["none", "roleplay", "placebo_patch"]) {
      const p = await Peer.open(arm(b, a));
      await p.hello();
      p.start("bowl", 0);
      expect((await p.observe(0.1)).type).toBe("action");
      expect((await p.observe(0.1)).type).toBe("action");
      p.end(false);
      p.close();
    }
    await journalled(b, 3);
    await b.close();
    const sent = encodePng(PIXELS, 8, 8, 3);
    const images = up.observations.map((o) => (o.images as Record<string, NdArray>).agentview);
    expect(images).toHaveLength(6);
    // none and roleplay: both steps forwarded as the PNG the benchmark sent, byte for byte.
    for (const img of images.slice(0, 4)) {
      expect(img).toBeInstanceOf(EncodedImage);
      expect(Buffer.compare((img as EncodedImage).bytes, sent)).toBe(0);
    }
    // placebo_patch edits pixels: what it sends is its own image (raw), not the benchmark's PNG.
    for (const img of images.slice(4)) {
      expect(img).toBeInstanceOf(NdArray);
      expect(img).not.toBeInstanceOf(EncodedImage);
      expect(Buffer.compare((img as NdArray).data, PIXELS)).not.toBe(0);
    }
    const rs = records(out);
    // The scene digest is of the first frame as decoded (pixels, then the state), for every arm.
    const scene = sha256Stream();
    scene.update("m:agentview:8x8x3\u0000");
    scene.update(PIXELS);
    scene.update("s:");
    scene.update(new Uint8Array(Float64Array.from(STATES).buffer));
    const first = scene.digest();
    expect(rs.map((r) => r.scene_digest)).toEqual([first, first, first]);
    // The received digest hashes the forwarded bytes: what the upstream received, step by step.
    const received = sha256Stream();
    for (let s = 0; s < 2; s++) {
      received.update("i:pick up the black bowl and place it on the plate\u0000");
      received.update(new Uint8Array(Float32Array.from(STATES).buffer));
      received.update("e:agentview:png:8x8x3\u0000");
      received.update(sent);
    }
    expect(rs[0]?.received_digest).toBe(received.digest());
    expect(new Set(rs.map((r) => r.received_digest)).size).toBe(3);
  });
});
