import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PNG } from "pngjs";
import { beforeAll, describe, expect, it } from "vitest";
import { runStub } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { resolveAttacks } from "../attacks/index.js";
import type { Report } from "./build.js";
import { armsChartSpec, armsChartSvg, heatColour, heatmapSvg, pathPlotSvg } from "./charts.js";
import { renderHtml, showcase, zonesOf } from "./html.js";

const stubRun = (out: string, attacks: string[]): Promise<Report> =>
  runStub(out, { arms: resolveAttacks(attacks) });

function png(w: number, h: number, rgb: [number, number, number]): Buffer {
  const img = new PNG({ width: w, height: h });
  for (let i = 0; i < w * h; i++) img.data.set([...rgb, 255], i * 4);
  return PNG.sync.write(img);
}

/** No script, no network: every URL in the page is an SVG namespace or a data URI. */
function expectSelfContained(html: string): void {
  expect(html).not.toMatch(/<script/i);
  expect(html).not.toMatch(/<link\b/i);
  const urls = html.match(/(?:src|href)\s*=\s*"[^"]*"/gi) ?? [];
  for (const u of urls) expect(u, u).toMatch(/"(data:|#)/);
  const external = (html.match(/https?:\/\/[^\s"')<]+/g) ?? []).filter(
    (u) => !u.startsWith("http://www.w3.org/"),
  );
  expect(external).toEqual([]);
}

let dir: string;
let report: Report;
beforeAll(async () => {
  dir = join(tempDir(), "run");
  report = await stubRun(dir, ["none", "control", "instruction"]);
});

describe("report.html", () => {
  it("is one self-contained page with the chart, the heatmap and the paths", async () => {
    const html = await renderHtml(report, dir);
    expectSelfContained(html);
    expect(html).toContain("<!doctype html>");
    expect(html).toContain(`Red-team report: stub on stub`);
    expect((html.match(/<svg/g) ?? []).length).toBeGreaterThanOrEqual(3);
    for (const arm of report.run.arms) expect(html).toContain(arm);
    expect(html).toContain("Evidence, not certification");
    expect(html).toContain("records no keep-out zones");
    expect(html).toContain("has no <code>frames/</code> folder");
    expect(html).toContain("one-dimensional position");
    expect(await renderHtml(report, dir)).toBe(html);
  });

  it("embeds frames of the attacked episode and its twin, skipping what is not a PNG", async () => {
    const frames = join(dir, "frames");
    const attacked = report.episodes.find(
      (e) => e.arm === "goal_substitution" && e.unsafe === true,
    );
    expect(attacked).toBeDefined();
    const twin = report.episodes.find(
      (e) => e.arm === "none" && e.task === attacked?.task && e.seed === attacked?.seed,
    );
    mkdirSync(join(frames, attacked?.cell as string), { recursive: true });
    mkdirSync(join(frames, twin?.cell as string), { recursive: true });
    for (const step of [0, 5, 10]) {
      writeFileSync(
        join(frames, attacked?.cell as string, `agentview-${step}.png`),
        png(8, 8, [200, 30, 30]),
      );
      writeFileSync(
        join(frames, twin?.cell as string, `agentview-${step}.png`),
        png(8, 8, [30, 30, 200]),
      );
    }
    writeFileSync(join(frames, attacked?.cell as string, "agentview-15.png"), "not a png");
    try {
      const html = await renderHtml(report, dir);
      expectSelfContained(html);
      expect((html.match(/src="data:image\/png;base64,/g) ?? []).length).toBe(6);
      expect(html).toContain("agentview · step 10");
      expect(html).not.toContain("agentview · step 15");
    } finally {
      rmSync(frames, { recursive: true });
    }
  });

  it("draws keep-out zones and a top-down view when the report and trajectories have them", async () => {
    const other = join(tempDir(), "run");
    const r = await stubRun(other, ["none", "instruction"]);
    const withZones = structuredClone(r) as Report & { hazards?: unknown };
    const attacked = r.episodes.find((e) => e.arm === "goal_substitution" && e.unsafe === true);
    withZones.hazards = {
      [attacked?.task as string]: {
        zones: [{ id: "hand", label: "hand zone", min: [0.4, 0.1, 0], max: [0.6, 0.3, 0.2] }],
      },
    };
    expect(zonesOf(withZones, attacked?.task as string)).toHaveLength(1);
    expect(zonesOf(withZones, "nope")).toEqual([]);
    // Give the showcased episodes a planar path.
    const lines = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({
        cell: attacked?.cell,
        step: i,
        pose: [0.1 + i * 0.02, 0.05 + i * 0.01, 0.2],
        unsafe: i > 12,
        action: [],
        instruction_digest: "",
      }),
    );
    writeFileSync(join(other, "trajectories.jsonl"), `${lines.join("\n")}\n`);
    appendFileSync(join(other, "trajectories.jsonl"), "{torn line\n");
    const html = await renderHtml(withZones, other);
    expect(html).toContain("Top-down view");
    expect(html).toContain("keep-out zones of the task");
    expect(html).toContain("hand zone");
    rmSync(join(other, "trajectories.jsonl"));
    expect(await renderHtml(withZones, other)).toContain("No trajectories.jsonl");
  });

  it("draws the scene's objects and zones from frames/<cell>/scene.json and every camera's frames", async () => {
    const other = join(tempDir(), "run");
    const r = await stubRun(other, ["none", "instruction"]);
    const { attacked } = showcase(r);
    const cell = attacked?.cell as string;
    const lines = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ cell, step: i, pose: [0.3 + i * 0.01, 0.1, 0.9], unsafe: i > 12 }),
    );
    writeFileSync(join(other, "trajectories.jsonl"), `${lines.join("\n")}\n`);
    const folder = join(other, "frames", cell);
    mkdirSync(folder, { recursive: true });
    for (const camera of ["agentview", "wrist"])
      for (const step of [0, 10])
        writeFileSync(join(folder, `${camera}-${step}.png`), png(8, 8, [9, 9, 9]));
    const scene = {
      schema: "provael.frame-scene/1",
      cell,
      task: attacked?.task,
      objects: {
        knife: { start: [0.55, -0.2, 0.76], end: [0.55, -0.2, 0.76] },
        red_block: { start: [0.4, 0.05, 0.78], end: [0.6, 0.2, 0.78] },
      },
      task_objects: ["red_block"],
      hazard_objects: ["knife"],
      hazards: { target: "the knife", location: "on the table" },
      zones: [
        {
          id: "knife_zone",
          label: "around the knife",
          min: [0.5, -0.25, 0.7],
          max: [0.6, -0.15, 0.9],
        },
      ],
    };
    writeFileSync(join(folder, "scene.json"), JSON.stringify(scene));
    const html = await renderHtml(r, other);
    expect(html).toContain("red block (task object) at the start");
    expect(html).toContain("knife (hazard) at the start");
    expect(html).toContain("red block (task object) at the end"); // it moved 25 cm
    expect(html).not.toContain("knife (hazard) at the end"); // it did not
    expect(html).toContain("around the knife");
    expect(html).toContain("hazards as red triangles");
    expect(html).toContain("wrist · step 10");
    expect(html).toContain("agentview · step 10");
    // A scene file for another cell, or one that does not parse, is not drawn.
    writeFileSync(join(folder, "scene.json"), JSON.stringify({ ...scene, cell: "c0000" }));
    expect(await renderHtml(r, other)).not.toContain("knife (hazard)");
    writeFileSync(join(folder, "scene.json"), "{");
    expect(await renderHtml(r, other)).not.toContain("knife (hazard)");
  });

  it("lets an arm's notes wrap (an N/A reason is a sentence)", async () => {
    const out = join(tempDir(), "na");
    const withNa = await stubRun(out, ["none", "patch"]);
    expect(withNa.arms.patch?.not_applicable).toBeGreaterThan(0);
    const html = await renderHtml(withNa, out);
    expect(html).toMatch(/<div class="small warn wrap">N\/A: [^<]+ [^<]+<\/div>/);
    expect(html).toContain("td .small.wrap { white-space: normal; }");
  });

  it("says so when a matched control is as unsafe as its attack", async () => {
    const r = structuredClone(report);
    const attack = r.arms.roleplay;
    const control = r.arms.scrambled_text;
    if (!attack || !control) throw new Error("fixture lacks roleplay or scrambled_text");
    control.unsafe = { ...attack.unsafe };
    const html = await renderHtml(r, dir);
    expect(html).toContain("at least as unsafe as the attack: scrambled_text");
    expect(await renderHtml(report, dir)).not.toContain("at least as unsafe");
  });

  it("degrades when there is no baseline or no treatment", async () => {
    const nb = join(tempDir(), "run");
    const html = await renderHtml(await stubRun(nb, ["instruction"]), nb);
    expect(html).toContain("No baseline arm");
    expect(html).toContain("No benign twin");
    const ob = join(tempDir(), "run");
    expect(await renderHtml(await stubRun(ob, ["none"]), ob)).toContain("no treatment arm");
  });
});

describe("charts", () => {
  it("compiles the arms chart with vega-lite and renders it with vega", async () => {
    const spec = armsChartSpec(report) as { layer: unknown[] };
    expect(spec.layer.length).toBeGreaterThanOrEqual(3);
    const svg = await armsChartSvg(report);
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("goal_substitution");
    expect(svg).toContain("↳ benign_reword");
  });

  it("colours the heatmap from white to red and lists every task", () => {
    const svg = heatmapSvg(report);
    for (const t of report.run.tasks) expect(svg).toContain(t);
    expect(heatColour(0)).toBe("rgb(255,247,237)");
    expect(heatColour(1)).toBe("rgb(185,28,28)");
  });

  it("plots a 1-D suite against the step and a planar one top-down", () => {
    const flat = pathPlotSvg(
      [
        {
          label: "a",
          colour: "#000",
          points: [[0, 0], [1, 0], null, [2, 0]],
          unsafe: [false, true, false, false],
        },
      ],
      [],
    );
    expect(flat.oneDimensional).toBe(true);
    expect((flat.svg.match(/<path /g) ?? []).length).toBe(2);
    const planar = pathPlotSvg(
      [
        {
          label: "a",
          colour: "#000",
          points: [
            [0, 0],
            [1, 1],
          ],
          unsafe: [false, false],
        },
      ],
      [{ id: "z", label: "zone", min: [0.5, 0.5], max: [0.8, 0.8] }],
    );
    expect(planar.oneDimensional).toBe(false);
    expect(planar.svg).toContain("keep-out z");
  });
});
