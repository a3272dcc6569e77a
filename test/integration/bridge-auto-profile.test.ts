/**
 * `--profile auto`: the first accepted HELLO's benchmark class chooses the profile (a LIBERO
 * subclass included); a benchmark of another profile is then refused with words that say so;
 * an unknown class is refused with the same words on both sides; nothing to report when no
 * HELLO was accepted.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { refusalText } from "../../src/bridge/refusal.js";
import type { BridgeEvent } from "../../src/bridge/server.js";
import { wireMap } from "../../src/policies/served/codec/tree.js";
import { arm, bridge, closeOpen, journalled, Peer, records } from "../support/bridge.js";

afterEach(closeOpen);

const LIBERO_PLUS = "vla_eval.benchmarks.libero_plus.benchmark:LIBEROPlusBenchmark";
const SIMPLER = "vla_eval.benchmarks.simpler.benchmark:SimplerEnvBenchmark";

function hello(p: Peer, benchmark: string) {
  const h = wireMap();
  h.harness_version = "test";
  h.protocol_version = 1;
  h.benchmark = benchmark;
  p.send("hello", h);
  return p.next();
}

describe("provael bridge --profile auto", () => {
  it("takes the profile from the first HELLO (a LIBERO subclass) and refuses another benchmark", async () => {
    const { b, out } = await bridge("stub", ["none"], {}, undefined, { profile: "auto" });
    const p = await Peer.open(arm(b, "none"));
    const reply = await hello(p, LIBERO_PLUS);
    expect(reply.type).toBe("hello");
    expect(reply.payload.observation_params).toMatchObject({ send_state: true });
    p.start("bowl", 0);
    expect((await p.observe(0.1)).type).toBe("action");
    p.end(true);
    await journalled(b, 1);
    const q = await Peer.open(arm(b, "none"));
    const refused = await hello(q, SIMPLER);
    expect(refused.type).toBe("error");
    expect(String(refused.payload.error)).toMatch(
      /^hello_failed: config\/invalid: profile 'libero_plus' describes .* \(hint: this bridge chose profile 'libero_plus'/,
    );
    p.close();
    q.close();
    const result = await b.close();
    expect(result.report.run.bridge?.profile).toBe("libero_plus");
    expect(records(out)).toHaveLength(1);
  });

  it("refuses an unknown benchmark with the same words on both sides, and later accepts one it knows", async () => {
    const events: BridgeEvent[] = [];
    const { b, out } = await bridge("stub", ["none"], {}, undefined, {
      profile: "auto",
      onEvent: (e) => events.push(e),
    });
    const p = await Peer.open(arm(b, "none"));
    const refused = await hello(p, "my_lab.benchmarks:LIBEROBenchmarkz");
    expect(refused.type).toBe("error");
    const said = String(refused.payload.error);
    expect(said).toMatch(/^hello_failed: config\/invalid: .*LIBEROBenchmarkz/);
    const r = events.find((e) => e.type === "refusal");
    expect(r?.type === "refusal" && refusalText(r.refusal)).toBe(said);
    const recorded = JSON.parse(readFileSync(join(out, "refusals.jsonl"), "utf8"));
    expect(refusalText(recorded)).toBe(said);
    // The bridge is still unbound: a known benchmark is accepted next.
    expect((await p.hello()).type).toBe("hello");
    p.close();
    const result = await b.close();
    expect(result.report.run.bridge?.profile).toBe("libero");
  });

  it("says there is nothing to report when no HELLO was accepted", async () => {
    const { b } = await bridge("stub", ["none"], {}, undefined, { profile: "auto" });
    await expect(b.close()).rejects.toMatchObject({ code: "run/incomplete" });
  });
});
