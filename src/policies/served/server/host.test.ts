import { describe, expect, it } from "vitest";
import { fixedClock } from "../../../core/clock.js";
import type { EpisodeInfo, Policy } from "../../../core/types.js";
import { stubPolicy } from "../../stub.js";
import { encodeObservation, LAYOUTS } from "../layouts.js";
import { PolicyHost } from "./host.js";

/** The stub policy, recording every reset and how many instances were loaded. */
function recording() {
  const resets: EpisodeInfo[] = [];
  let loads = 0;
  const policy: Policy = {
    ...stubPolicy,
    load: async (o) => {
      loads += 1;
      const inst = await stubPolicy.load(o);
      return {
        capabilities: inst.capabilities,
        reset: (e) => {
          resets.push(e);
          return inst.reset(e);
        },
        act: (obs) => inst.act(obs),
        close: () => inst.close(),
      };
    },
  };
  return { policy, resets, loads: () => loads };
}

const obs = { images: {}, state: new Float32Array(7), instruction: "move to the cup" };
const request = (id?: string, policySeed = 5) =>
  encodeObservation(
    LAYOUTS.libero!,
    obs,
    id === undefined ? undefined : { id, episode: { task: "fetch_cup", seed: 1, policySeed } },
  );

describe("PolicyHost reset rule", () => {
  it("resets on a new provael/episode id with its policy seed, not on every request", async () => {
    const r = recording();
    const host = new PolicyHost({
      policy: r.policy,
      layout: LAYOUTS.libero!,
      imageSize: [128, 128],
    });
    const a = host.episodeSession("a");
    await a.serial(() => a.act(request("a", 7)));
    await host.episodeSession("a").serial(() => a.act(request("a", 7)));
    const b = host.episodeSession("b");
    await b.serial(() => b.act(request("b", 9)));
    expect(r.resets).toEqual([
      { task: "fetch_cup", seed: 1, policySeed: 7 },
      { task: "fetch_cup", seed: 1, policySeed: 9 },
    ]);
    await host.close();
  });

  it("without an id: one episode per session, policy seed 0", async () => {
    const r = recording();
    const host = new PolicyHost({
      policy: r.policy,
      layout: LAYOUTS.libero!,
      imageSize: [128, 128],
    });
    const s = host.session();
    await s.serial(() => s.act(request()));
    await s.serial(() => s.act(request()));
    expect(r.resets).toEqual([{ task: "", seed: 0, policySeed: 0 }]);
    s.end();
    await host.close();
  });

  it("returns the instances of idle episodes to the pool instead of loading more", async () => {
    const r = recording();
    const clock = fixedClock(0);
    const host = new PolicyHost({
      policy: r.policy,
      layout: LAYOUTS.libero!,
      imageSize: [128, 128],
      clock,
    });
    for (let i = 0; i < 5; i++) {
      const s = host.episodeSession(`e${i}`);
      await s.serial(() => s.act(request(`e${i}`)));
      clock.advance(60_000);
    }
    expect(r.loads()).toBe(1);
    await host.close();
  });

  it("refuses to serve a privileged policy", () => {
    expect(
      () =>
        new PolicyHost({
          policy: { ...stubPolicy, capabilities: { ...stubPolicy.capabilities, privileged: true } },
          layout: LAYOUTS.libero!,
          imageSize: null,
        }),
    ).toThrow(/privileged simulator state/);
  });
});
