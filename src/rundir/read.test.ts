import { appendFileSync, cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runStub } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { readRun, readSteps } from "./read.js";

describe("readRun", () => {
  const root = tempDir("provael-readrun-");
  const run = join(root, "run");
  beforeAll(async () => {
    await runStub(run, { tasks: ["fetch_cup"], seeds: 2 });
  }, 120_000);

  const copy = (name: string) => {
    const d = join(root, name);
    cpSync(run, d, { recursive: true });
    return d;
  };

  it("reads a finished run: validated report, manifest, header, saved frames", () => {
    const r = readRun(run);
    expect(r.state).toBe("finished");
    if (r.state !== "finished") return;
    expect(r.committed).toBe(true);
    expect(r.report.episodes.length).toBe(r.report.run.arms.length * 2);
    expect(r.digest).toMatch(/^sha256:/);
    expect(r.manifest?.report_digest).toBe(r.digest);
    expect(r.header?.plan.suite).toBe("stub");
  });

  it("a journal without a commit point is a run in progress, its torn last line left out", () => {
    const d = copy("running");
    rmSync(join(d, "execution-manifest.json"));
    appendFileSync(join(d, "journal.jsonl"), '{"type":"episode","rec');
    const r = readRun(d);
    expect(r.state).toBe("in-progress");
    if (r.state !== "in-progress") return;
    expect(r.droppedTail).toBe(true);
    expect(r.planned).toBe(r.header.plan.arms.length * 2);
    expect(r.episodes.length).toBe(r.planned);
  });

  it("names the first bad field of an edited report", () => {
    const d = copy("bad-report");
    const path = join(d, "report.json");
    const report = JSON.parse(readFileSync(path, "utf8"));
    report.arms.none.episodes = "ten";
    writeFileSync(path, JSON.stringify(report));
    // The manifest no longer names this report: without a journal it would still be read.
    rmSync(join(d, "journal.jsonl"));
    const r = readRun(d);
    expect(r.state).toBe("broken");
    if (r.state !== "broken") return;
    expect(r.problem.file).toBe("report.json");
    expect(r.problem.field).toBe("arms.none.episodes");
  });

  it("names the line and field of a damaged journal line that is not the last", () => {
    const d = copy("bad-journal");
    rmSync(join(d, "execution-manifest.json"));
    const path = join(d, "journal.jsonl");
    const lines = readFileSync(path, "utf8").split("\n");
    const ep = JSON.parse(lines[1] as string);
    ep.record.seed = "zero";
    lines[1] = JSON.stringify(ep);
    writeFileSync(path, lines.join("\n"));
    const r = readRun(d);
    expect(r.state).toBe("broken");
    if (r.state !== "broken") return;
    expect(r.problem).toMatchObject({ file: "journal.jsonl", line: 2, field: "record.seed" });
  });

  it("names a journal line whose bytes changed but still fit the schema (its checksum)", () => {
    const d = copy("tampered-journal");
    rmSync(join(d, "execution-manifest.json"));
    const path = join(d, "journal.jsonl");
    const lines = readFileSync(path, "utf8").split("\n");
    const ep = JSON.parse(lines[1] as string);
    ep.record.seed += 1;
    lines[1] = JSON.stringify(ep);
    writeFileSync(path, lines.join("\n"));
    const r = readRun(d);
    expect(r.state).toBe("broken");
    if (r.state !== "broken") return;
    expect(r.problem).toMatchObject({ file: "journal.jsonl", line: 2, field: "sum" });
  });

  it("a directory without a run is broken, saying so", () => {
    const r = readRun(join(root, "nothing"));
    expect(r.state).toBe("broken");
  });

  it("reads one cell's steps from trajectories or from the journal alike", () => {
    const r = readRun(run);
    if (r.state !== "finished") throw new Error("unfinished");
    const cell = (r.report.episodes.find((e) => e.unsafe) ?? r.report.episodes[0])!.cell;
    const a = readSteps(run, [cell], "trajectories").get(cell);
    const b = readSteps(run, [cell], "journal").get(cell);
    expect(a?.length).toBeGreaterThan(0);
    expect(b).toEqual(a);
  });

  it("indexes where each cell's lines lie once, extends it as a journal grows, and still names a bad line", () => {
    const r = readRun(run);
    if (r.state !== "finished") throw new Error("unfinished");
    const cells = r.report.episodes.map((e) => e.cell);
    const live = join(root, "growing");
    cpSync(run, live, { recursive: true });
    rmSync(join(live, "execution-manifest.json"));
    const lines = readFileSync(join(run, "journal.jsonl"), "utf8").trimEnd().split("\n");
    // The header and two episodes, then a torn third line: only whole lines count.
    const third = lines[3] as string;
    writeFileSync(
      join(live, "journal.jsonl"),
      `${lines.slice(0, 3).join("\n")}\n${third.slice(0, 40)}`,
    );
    const cellOf = (line: string) => (JSON.parse(line) as { record: { cell: string } }).record.cell;
    const early = readSteps(live, cells, "journal");
    expect([...early.values()].filter((s) => s.length > 0).length).toBe(2);
    expect(early.get(cellOf(third))).toEqual([]);
    // The rest of the torn line and every other episode arrive: the index picks them up.
    appendFileSync(
      join(live, "journal.jsonl"),
      `${third.slice(40)}\n${lines.slice(4).join("\n")}\n`,
    );
    const all = readSteps(live, cells, "journal");
    const fromTrajectories = readSteps(run, cells, "trajectories");
    for (const c of cells) expect(all.get(c), c).toEqual(fromTrajectories.get(c));
    // An edited line of a wanted cell is reported with its line number; other cells still read.
    const traj = readFileSync(join(run, "trajectories.jsonl"), "utf8").split("\n");
    const bad = join(root, "bad-steps");
    cpSync(run, bad, { recursive: true });
    const victim = JSON.parse(traj[4] as string) as { cell: string };
    traj[4] = (traj[4] as string).replace('"step":', '"step":"x","was":');
    writeFileSync(join(bad, "trajectories.jsonl"), traj.join("\n"));
    expect(() => readSteps(bad, [victim.cell], "trajectories")).toThrow(/line 5/);
  });
});
