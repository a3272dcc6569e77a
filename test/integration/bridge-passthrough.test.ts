/**
 * What vla-eval relies on from a model server, passed through the bridge (PROTOCOLS.md §4.5):
 * `/health` ready only while the upstream answers, `/config` answered by the upstream, the
 * EPISODE_START `recording` block forwarded, the upstream's HELLO asks merged with the profile's
 * needs, and several shard connections on one arm at once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { wireMap } from "../../src/policies/served/codec/tree.js";
import {
  arm,
  bridge,
  closeOpen,
  journalled,
  Peer,
  playEpisode,
  recordingUpstream,
  records,
} from "../support/bridge.js";

afterEach(closeOpen);

const http = (url: string) => url.replace("ws:", "http:");

describe("provael bridge passes through what vla-eval relies on", () => {
  it("answers /health only while the upstream does, and forwards /config to it", async () => {
    const up = await recordingUpstream();
    const { b } = await bridge("vla-eval", ["none"], { layout: "vla-eval" }, up.url);
    const ready = await fetch(`${http(b.url)}/health`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: "ok" }]);
    const config = await fetch(`${http(b.url)}/config?max_batch_size=8`);
    expect(await config.json()).toEqual({
      max_batch_size: 8,
      max_wait_time: 0.5,
      query: "?max_batch_size=8",
    });
    await up.close();
    const down = await fetch(`${http(b.url)}/health`);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ status: "waiting" });
  });

  it("merges the upstream's HELLO asks with the profile's and forwards the recording block", async () => {
    const up = await recordingUpstream(1, {
      observation_params: { send_wrist_image: true, custom_flag: 3 },
    });
    const { b, out } = await bridge("vla-eval", ["none"], { layout: "vla-eval" }, up.url);
    const p = await Peer.open(arm(b, "none"));
    const hello = await p.hello();
    // LIBERO's profile needs the state; the upstream asked for the wrist camera and its own flag.
    expect(hello.payload.observation_params).toEqual({
      custom_flag: 3,
      send_state: true,
      send_wrist_image: true,
    });
    const task = wireMap();
    task.name = "bowl";
    task.suite = "libero_spatial";
    task.episode_idx = 0;
    const start = wireMap();
    start.task = task;
    start.recording = { sid: "s1", eid: "e1", eval_id: "ev", db_path: "/tmp/rec.sqlite" } as never;
    p.send("episode_start", start);
    expect((await p.observe(0.1)).type).toBe("action");
    p.end(true);
    p.close();
    await journalled(b, 1);
    expect(up.starts.at(-1)?.recording).toEqual({
      sid: "s1",
      eid: "e1",
      eval_id: "ev",
      db_path: "/tmp/rec.sqlite",
    });
    await b.close();
    expect(records(out)[0]?.error).toBeNull();
  });

  it("plays several shard connections on one arm at once", async () => {
    const { b, out } = await bridge("stub", ["none"]);
    // Two shards of one vla-eval run: disjoint episode indices, at the same time.
    await Promise.all([
      (async () => {
        for (const seed of [0, 2]) await playEpisode(arm(b, "none"), { seed, steps: 3 });
      })(),
      (async () => {
        for (const seed of [1, 3]) await playEpisode(arm(b, "none"), { seed, steps: 3 });
      })(),
    ]);
    await journalled(b, 4);
    const result = await b.close();
    expect(
      records(out)
        .map((r) => [r.seed, r.repeat, r.error])
        .sort(),
    ).toEqual([
      [0, 0, null],
      [1, 0, null],
      [2, 0, null],
      [3, 0, null],
    ]);
    expect(result.report.arms.none?.episodes).toBe(4);
  });
});
