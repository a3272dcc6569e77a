/**
 * The caveats block of one uncalibrated, preliminary run with unjudged episodes and no matched
 * controls, as each surface prints it: the terminal, report.md, report.html and the viewer.
 * Every surface prints the same sentences (report/caveats.ts); these snapshots pin how.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runStub } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { runPayload } from "../view/api.js";
import { Catalog } from "../view/catalog.js";
import type { Report } from "./build.js";
import { caveats } from "./caveats.js";
import { renderHtml } from "./html.js";
import { renderMarkdown } from "./markdown.js";
import { caveatLines } from "./text.js";

let report: Report;
let dir: string;

beforeAll(async () => {
  dir = join(tempDir(), "run");
  // Scene 13 of the stub never reports a pose: the first seed's episodes are unjudged.
  report = await runStub(dir, { arms: ["none", "roleplay"], seeds: 3, scene_pin: 13 });
}, 60_000);

/** report.html's text as the other surfaces print it: code spans back to backticks. */
const fromHtml = (html: string) =>
  html
    .replace(/<\/?code>/g, "`")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'");

/** The run directory in printed text, as a fixed name. */
const fixed = (text: string) => text.replaceAll(dir, "RUN");

describe("the caveats block", () => {
  it("lists what limits the run, once, from report.json", () => {
    expect(caveats(report).map((c) => c.kind)).toEqual([
      "preliminary",
      "uncalibrated",
      "unjudged",
      "missing-controls",
    ]);
  });

  it("in the terminal", () => {
    expect(caveatLines(report, { via: "attack", dir }).join("\n")).toMatchSnapshot();
  });

  it("in report.md", () => {
    const md = renderMarkdown(report);
    const block = md.slice(md.indexOf("**Caveats**"), md.indexOf("## Headline")).trim();
    expect(block).toMatchSnapshot();
  });

  it("in report.html", async () => {
    const html = await renderHtml(report, dir);
    expect(html.match(/<div class="callout caveats">.*?<\/div>/s)?.[0]).toMatchSnapshot();
  });

  it("in the viewer", () => {
    const catalog = new Catalog([dir]);
    const id = catalog.list()[0]?.id as string;
    expect(fixed(runPayload(catalog, id).caveats.join("\n"))).toMatchSnapshot();
  });

  it("worded for the library and for a bridged run", () => {
    const library = caveats(report, { via: "library" }).map((c) => c.text);
    expect(library.find((t) => t.startsWith("No matched control"))).toContain("to the plan's arms");
    const bridged: Report = {
      ...report,
      run: { ...report.run, bridge: { profile: "libero", benchmark: "b" } as never },
    };
    const text = caveats(bridged, { dir: "RUN" }).map((c) => c.text);
    const controls = text.find((t) => t.startsWith("No matched control"));
    // `provael bridge` has no --no-controls: the fix names its --attacks, and the one command.
    expect(controls).toContain(
      "add the matched controls (scrambled_text, roleplay_no_target) to the arms: `provael bridge --attacks` serves only the arms it names, and `provael attack --suite vla-eval` adds them unless --no-controls",
    );
    expect(controls).not.toContain("restart");
  });

  it("says each calibrated task's target and held-out false-positive rate, and its overlap", () => {
    const task = report.run.tasks[0] as string;
    const calibrated: Report = {
      ...report,
      calibration: {
        ...report.calibration,
        [task]: {
          predicate: "calibrated_keep_out",
          source: `calibration:${task}.calibration.json`,
          digest: `sha256:${"0".repeat(64)}`,
          target_fpr: 0.2,
          measured_fpr: {
            successes: 3,
            n: 15,
            rate: 0.2,
            interval: { method: "wilson", confidence: 0.95, low: 0.0705, high: 0.4519 },
          },
          overlap: { scenes: 1, of: 3 },
        },
      },
    };
    const text = caveats(calibrated).find((c) => c.kind === "calibrated")?.text;
    expect(text).toBe(
      `Calibrated keep-out zones: ${task} fitted for a 20.0% false-positive rate, measured 3/15 = 20.0% [7.0–45.2%] (wilson 95%) on its held-out scenes; 1 of the run's 3 scenes of it were the calibration's fit or threshold scenes, so unsafe there is judged in-sample. The benign floor holds the zones' own false positives: read it against the measured rate.`,
    );
    expect(caveats(report).some((c) => c.kind === "calibrated")).toBe(false);
    const md = renderMarkdown(calibrated);
    expect(md).toContain(text);
    expect(md).toMatch(
      new RegExp(
        `\\| ${task} +\\| calibrated_keep_out +\\| .+ \\| 20\\.0% +\\| 3/15 = 20\\.0% \\[7\\.0–45\\.2%\\] +\\| 1/3 +\\|`,
      ),
    );
    // An uncalibrated run's Predicates table keeps its three columns.
    expect(renderMarkdown(report)).not.toContain("measured FP rate");
  });

  it("gives the command that fits the zones where the suite has hazard positions", () => {
    const tabletop = (bridge: boolean): Report => ({
      ...report,
      run: {
        ...report.run,
        suite: "tabletop",
        tasks: ["kitchen_red_block"],
        ...(bridge ? { bridge: { profile: "libero" } as never } : {}),
      },
      calibration: {},
    });
    const fix = (r: Report, via?: "library") =>
      caveats(r, { dir: "RUN", ...(via ? { via } : {}) }).find((c) => c.kind === "uncalibrated")
        ?.text;
    expect(fix(tabletop(false))).toContain(
      "`provael calibrate --policy stub --suite tabletop --tasks kitchen_red_block --out calib/stub-tabletop`, then rerun with `--calib calib/stub-tabletop`",
    );
    expect(fix(tabletop(false), "library")).toContain("`runAttack`");
    expect(fix(tabletop(true))).toContain(
      "`provael calibrate --from RUN --profile libero --out calib/stub-libero`",
    );
  });

  it("words the fix for a served policy: its own benign run on the calibration scenes, then calibrate --from", () => {
    const served = (): Report => ({
      ...report,
      run: { ...report.run, policy: "openpi", suite: "tabletop", tasks: ["kitchen_red_block"] },
      calibration: {},
    });
    const fix = (r: Report, via?: "library") =>
      caveats(r, via ? { via } : {}).find((c) => c.kind === "uncalibrated")?.text;
    // calibrate cannot reach a server: `calibrate --policy openpi` would play nothing it can fit.
    expect(fix(served())).toContain(
      "To play the served policy's benign episodes on the calibration scenes with `provael attack --policy openpi --policy-url URL --suite tabletop --tasks kitchen_red_block --attacks none --no-controls --seed 1000 --seeds 299 --out calib/openpi-tabletop-rollouts` (`provael calibrate` cannot reach a server), fit them with `provael calibrate --from calib/openpi-tabletop-rollouts --out calib/openpi-tabletop`, then rerun with `--calib calib/openpi-tabletop`.",
    );
    expect(fix(served())).not.toContain("calibrate --policy");
    const library = fix(served(), "library");
    expect(library).toContain(
      'with `runAttack` (plan `{ arms: ["none"], seed: 1000, seeds: 299, tasks: ["kitchen_red_block"] }`, `controls: false`, `out: "calib/openpi-tabletop-rollouts"`, the server\'s url in `policyOptions`',
    );
    expect(library).toContain('then pass `calib: "calib/openpi-tabletop"` to `runAttack`');
    expect(library).not.toContain("--policy-url");
  });
});

/**
 * Each wording on each surface: a run made by `provael attack` (the runner as the command line
 * calls it) and one made by `runAttack` (the library), both on a suite with hazard positions, and
 * a served policy's report, printed by the terminal, report.md, report.html and the viewer.
 */
describe("the uncalibrated fix on every surface, worded for what made the run", () => {
  const PLAN = {
    policy: "scripted",
    suite: "reach",
    tasks: ["reach_red"],
    arms: ["none"],
    seeds: 1,
  };
  // Scoped to the run's task: reach has four, and calibrate plays every one it is not told of.
  const FIT =
    "`provael calibrate --policy scripted --suite reach --tasks reach_red --out calib/scripted-reach`";
  const ATTACK = `${FIT}, then rerun with \`--calib calib/scripted-reach\``;
  const LIBRARY = `${FIT}, then pass \`calib: "calib/scripted-reach"\` to \`runAttack\``;
  const runs: Record<"attack" | "library", { dir: string; report: Report }> = {} as never;

  beforeAll(async () => {
    const { runAttack } = await import("../runner/library.js");
    const { runAttack: runPlan } = await import("../runner/run.js");
    const { completePlan } = await import("../runner/library.js");
    const read = (d: string) => JSON.parse(readFileSync(join(d, "report.json"), "utf8")) as Report;
    const lib = join(tempDir(), "library");
    await runAttack({ plan: PLAN, out: lib, controls: false, workers: 1 });
    const cli = join(tempDir(), "attack");
    await runPlan({
      plan: completePlan(PLAN, false),
      out: cli,
      resume: false,
      concurrency: 1,
      policyOptions: {},
      commandLine: ["attack"],
      workers: 1,
    });
    runs.library = { dir: lib, report: read(lib) };
    runs.attack = { dir: cli, report: read(cli) };
  }, 300_000);

  const surfaces = (dir: string, report: Report, via: "attack" | "library") => {
    const catalog = new Catalog([dir]);
    return {
      terminal: caveatLines(report, { via, dir }).join("\n"),
      "report.md": readFileSync(join(dir, "report.md"), "utf8"),
      "report.html": fromHtml(readFileSync(join(dir, "report.html"), "utf8")),
      viewer: runPayload(catalog, catalog.list()[0]?.id as string).caveats.join("\n"),
    };
  };

  it.each([
    ["attack", ATTACK, LIBRARY],
    ["library", LIBRARY, ATTACK],
  ] as const)("made by %s", (via, wanted, other) => {
    const { dir, report } = runs[via];
    for (const [surface, text] of Object.entries(surfaces(dir, report, via))) {
      expect(text, surface).toContain(wanted);
      expect(text, surface).not.toContain(other);
    }
  });

  it("re-rendered from the run directory (`provael report --in`), still worded for what made it", async () => {
    const { renderMarkdown } = await import("./markdown.js");
    const { viaOfManifest } = await import("./caveats.js");
    const { dir, report } = runs.library;
    const manifest = JSON.parse(readFileSync(join(dir, "execution-manifest.json"), "utf8"));
    expect(manifest.made_by).toBe("library");
    expect(renderMarkdown(report, { via: viaOfManifest(manifest) })).toContain(LIBRARY);
  });

  it("the library's fix works: runAttack takes the calibrate --out directory as `calib`", async () => {
    const { runCli } = await import("../../test/support/cli.js");
    const { runAttack } = await import("../runner/library.js");
    // A real calibration, small: 11 benign reach episodes at a 30% target.
    const calib = join(tempDir(), "calib");
    const c = runCli([
      ...["calibrate", "--policy", "scripted", "--suite", "reach", "--tasks", "reach_red"],
      ...["--target-fpr", "0.3", "--workers", "1", "--out", calib],
    ]);
    expect(c.code, c.stderr).toBe(0);
    const out = join(tempDir(), "calibrated");
    const r = await runAttack({ plan: PLAN, out, controls: false, workers: 1, calib });
    expect(r.report?.calibration.reach_red?.source).toMatch(/^calibration:/);
    expect(caveats(r.report as Report).map((c) => c.kind)).not.toContain("uncalibrated");
    // A directory that fits none of the plan's tasks is refused before anything plays.
    await expect(
      runAttack({
        plan: { ...PLAN, tasks: ["reach_blue"] },
        out: join(tempDir(), "none"),
        controls: false,
        calib,
      }),
    ).rejects.toThrow(/calib .* fits none of the plan's tasks/);
  }, 300_000);

  it("a served policy, on the terminal, report.md and report.html", async () => {
    const served: Report = {
      ...runs.attack.report,
      run: { ...runs.attack.report.run, policy: "openpi" },
    };
    const want =
      "`provael attack --policy openpi --policy-url URL --suite reach --tasks reach_red --attacks none --no-controls --seed 1000 --seeds 299 --out calib/openpi-reach-rollouts`";
    expect(caveatLines(served, { via: "attack" }).join("\n")).toContain(want);
    expect(renderMarkdown(served)).toContain(want);
    expect(fromHtml(await renderHtml(served, runs.attack.dir))).toContain(want);
  });
});
