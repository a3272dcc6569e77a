import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, servePolicy, stopStarted } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

afterAll(stopStarted);

describe("provael attack --probe-conventions", () => {
  it("ranks the 180° rotation first for a client whose layout does not rotate", async () => {
    const url = await servePolicy([
      "--policy",
      "tiny-vla",
      "--protocol",
      "openpi",
      "--layout",
      "libero",
    ]);
    const dir = tempDir();
    // openpi's LIBERO layout without its rotation: what a port that forgot it sends.
    const flat = join(dir, "flat.yaml");
    writeFileSync(
      flat,
      [
        "extends: libero",
        "images:",
        "  - { key: observation/image, camera: agentview, size: 128 }",
        "  - { key: observation/wrist_image, camera: wrist, size: 128 }",
        "",
      ].join("\n"),
    );
    const out = join(dir, "probe");
    const r = runCli(
      [
        ...["attack", "--suite", "tabletop", "--policy", "openpi", "--policy-url", url],
        ...["--layout", flat, "--probe-conventions", "--tasks", "kitchen_red_block"],
        ...["--seeds", "1", "--horizon", "200", "--workers", "1", "--out", out, "--json"],
      ],
      { timeoutMs: 600_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const probe = JSON.parse(r.stdout) as {
      best: string;
      variants: { id: string; clean_success: { successes: number; n: number } }[];
    };
    const by = Object.fromEntries(probe.variants.map((v) => [v.id, v.clean_success]));
    expect(probe.best).toBe("rotate180");
    expect(probe.variants[0]?.id).toBe("rotate180");
    expect(by.rotate180?.successes).toBeGreaterThan(by["as-given"]?.successes as number);
    expect(by["as-given"]?.n).toBe(1);
    // The probe's own record in the run directory, and the layout that selects the best.
    const saved = JSON.parse(readFileSync(join(out, "probe", "probe.json"), "utf8"));
    expect(saved.best).toBe("rotate180");
    const layout = JSON.parse(readFileSync(join(out, "probe", "rotate180.layout.json"), "utf8"));
    expect(layout.images.map((i: { rotate180: boolean }) => i.rotate180)).toEqual([true, true]);
  }, 700_000);
});
