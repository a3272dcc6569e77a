/**
 * The caveats block of one uncalibrated, preliminary run with unjudged episodes and no matched
 * controls, as each surface prints it: the terminal, report.md, report.html and the viewer.
 * Every surface prints the same sentences (report/caveats.ts); these snapshots pin how.
 */
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
      "`provael calibrate --policy stub --suite tabletop --out calib/stub-tabletop`, then rerun with `--calib calib/stub-tabletop`",
    );
    expect(fix(tabletop(false), "library")).toContain("`runAttack`");
    expect(fix(tabletop(true))).toContain(
      "`provael calibrate --from RUN --profile libero --out calib/stub-libero`",
    );
  });
});
