/**
 * Publishing to GitHub Pages with the project's Action: examples/ci/github-pages.yml, parsed and
 * checked as the other CI examples are (its permissions, the Pages actions, the inputs it gives
 * the Action), and the site it would publish built for real: the Action's attack, site and gate
 * steps run here as a runner would run them (their `${{ inputs.* }}` resolved from the
 * workflow's `with:` and the Action's defaults, `npx provael@…` replaced by the built CLI), on
 * the workflow's own stub plan. The folder it uploads holds the playground, the page that opens
 * run directories and the run's viewer.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { CLI } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const ROOT = join(import.meta.dirname, "..", "..");
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");

interface Step {
  id?: string;
  name?: string;
  if?: string;
  uses?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}
interface Job {
  "runs-on": string;
  needs?: string | string[];
  environment?: { name: string; url?: string };
  steps: Step[];
}

const action = parseYaml(read("action.yml")) as {
  inputs: Record<string, { default?: string }>;
  runs: { using: string; steps: Step[] };
};
const workflow = parseYaml(read("examples/ci/github-pages.yml")) as {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
};

const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);
const actionStep = steps.find((s) => s.uses?.startsWith("provael/provael@")) as Step;
/** The Action's inputs as this workflow sets them: its `with:` over the Action's defaults. */
const inputs: Record<string, string> = {
  ...Object.fromEntries(Object.entries(action.inputs).map(([k, v]) => [k, v.default ?? ""])),
  ...actionStep?.with,
};

/** `${{ inputs.x }}` and `${{ inputs.x != '' }}` as the runner evaluates them. */
const expand = (v: string) =>
  v.replace(/\$\{\{\s*inputs\.([a-z-]+)\s*\}\}/g, (_, k: string) => {
    if (!(k in inputs)) throw new Error(`the Action declares no input ${k}`);
    return inputs[k] as string;
  });
function runs(step: Step): boolean {
  if (!step.if) return true;
  const m = /^\$\{\{\s*inputs\.([a-z-]+)\s*(==|!=)\s*'([^']*)'\s*\}\}$/.exec(step.if);
  if (!m) throw new Error(`a condition this test does not evaluate: ${step.if}`);
  return (inputs[m[1] as string] === m[3]) === (m[2] === "==");
}

describe("examples/ci/github-pages.yml", () => {
  it("deploys to Pages with the permissions and actions Pages needs, through the Action", () => {
    expect(workflow.permissions).toMatchObject({ pages: "write", "id-token": "write" });
    // Publishing needs no write access to the repository nor to code scanning.
    expect(workflow.permissions.contents).toBe("read");
    expect(workflow.permissions["security-events"]).toBeUndefined();
    expect(actionStep).toBeDefined();
    for (const k of Object.keys(actionStep.with ?? {})) expect(action.inputs[k], k).toBeDefined();
    expect(actionStep.with?.["upload-sarif"]).toBe("false");
    const site = actionStep.with?.site;
    expect(site).toBeTruthy();
    // The artifact uploaded is the folder the Action writes the site into.
    const upload = steps.find((s) => s.uses?.startsWith("actions/upload-pages-artifact@"));
    expect(upload?.with?.path).toBe(site);
    const [deployName, deploy] = Object.entries(workflow.jobs).find(([, j]) =>
      j.steps.some((s) => s.uses?.startsWith("actions/deploy-pages@")),
    ) as [string, Job];
    const built = Object.entries(workflow.jobs).find(([, j]) => j.steps.includes(actionStep));
    expect(built).toBeDefined();
    expect(deployName).not.toBe(built?.[0]);
    expect([deploy.needs].flat()).toContain(built?.[0]);
    expect(deploy.environment?.name).toBe("github-pages");
    const deployStep = deploy.steps.find((s) => s.uses?.startsWith("actions/deploy-pages@"));
    expect(deploy.environment?.url).toBe(`\${{ steps.${deployStep?.id}.outputs.page_url }}`);
  });

  it("has the Action write the site only when asked, from the inputs through env", () => {
    const siteStep = action.runs.steps.find((s) => s.env?.IN_SITE !== undefined) as Step;
    expect(siteStep.if).toBe(`\${{ inputs.site != '' }}`);
    expect(siteStep.run).toMatch(/provael playground --out "\$IN_SITE"/);
    expect(siteStep.run).toMatch(/provael view "\$IN_OUT" --bundle "\$IN_SITE\/run"/);
    expect(siteStep.run).not.toMatch(/\$\{\{/);
    // Written before the gate step, which fails the job when the gate fails.
    const at = (s: Step | undefined) => action.runs.steps.indexOf(s as Step);
    expect(at(siteStep)).toBeLessThan(at(action.runs.steps.find((s) => s.name === "gate")));
  });

  it("builds the site it would publish: the playground, its open page and the run's viewer", () => {
    const work = tempDir("provael-pages-");
    const output = join(work, "github-output");
    const summary = join(work, "step-summary");
    writeFileSync(output, "");
    writeFileSync(summary, "");
    const npx = /provael\(\) \{ npx --yes "provael@\$\{PROVAEL_VERSION\}" "\$@"; \}/;
    const played: string[] = [];
    for (const step of action.runs.steps) {
      if (!step.run || !runs(step)) continue;
      // Each script runs `provael` through npx from the registry; here, the CLI just built.
      const script = step.run.includes("provael()")
        ? step.run.replace(npx, `provael() { "${process.execPath}" "${CLI}" "$@"; }`)
        : step.run.replace(
            /npx --yes "provael@\$\{PROVAEL_VERSION\}"/g,
            `"${process.execPath}" "${CLI}"`,
          );
      expect(script, step.name).not.toContain("npx");
      const env = Object.fromEntries(
        Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(v)]),
      );
      execFileSync("bash", ["-c", script], {
        cwd: work,
        env: {
          ...process.env,
          ...env,
          GITHUB_OUTPUT: output,
          GITHUB_STEP_SUMMARY: summary,
          RUNNER_TEMP: join(work, "runner-temp"),
        },
        stdio: "pipe",
        timeout: 240_000,
      });
      played.push(step.name ?? step.id ?? "");
    }
    expect(played).toEqual([
      "provael attack",
      "provael report (SARIF)",
      "provael site (playground and the run's viewer)",
      "gate",
    ]);
    const site = join(work, inputs.site as string);
    const run = join(work, inputs.out as string);
    for (const f of [
      "index.html",
      "page.js",
      "worker.js",
      // The worker the open page replays dropped episodes with.
      "replay.js",
      "assets/files.json",
      "viewer/open.html",
      "viewer/open.js",
      "run/index.html",
      "run/open.html",
      "run/data/runs.js",
    ])
      expect(existsSync(join(site, f)), f).toBe(true);
    // The playground links its open page; the bundle is this run's.
    expect(readFileSync(join(site, "index.html"), "utf8")).toContain('href="viewer/open.html"');
    expect(readFileSync(join(site, "viewer", "open.html"), "utf8")).toContain(
      'data-replay="../replay.js"',
    );
    const digest = execFileSync("sha256sum", [join(run, "report.json")], { encoding: "utf8" });
    const runs0 = readFileSync(join(site, "run", "data", "runs.js"), "utf8");
    expect(runs0).toContain(`sha256:${digest.slice(0, 64)}`);
    // Nothing of the run directory was written into the site, nor the frame cache.
    expect(existsSync(join(site, "report.json"))).toBe(false);
    expect(existsSync(join(work, "runner-temp", "provael-view-cache"))).toBe(true);
    expect(readFileSync(summary, "utf8")).toMatch(/^# /m);
  }, 300_000);
});
