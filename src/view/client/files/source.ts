/// <reference lib="dom" />
/**
 * The source of a page that reads files the user dropped on it: run directories (read by
 * ./run-files.ts, their answers assembled by src/view/answers.ts as the server assembles them)
 * and `provael view --bundle` folders or zips (their answers are already written out). Nothing
 * is sent anywhere: images and clips are shown from object URLs of the dropped files.
 */
import type { PlanSpec } from "../../../core/plan.js";
import { caveatsWith, viaOfManifest } from "../../../report/caveat-list.js";
import { RUN_FILES } from "../../../rundir/names.js";
import type { FramesIndex, ReportFile } from "../../../rundir/schema/index.js";
import {
  compareAnswer,
  episodeAnswer,
  findPair,
  partialReport,
  reportArmsFrom,
  runAnswer,
  summarize,
} from "../../answers.js";
import type { PageFacts } from "../../facts.js";
import type {
  ComparePayload,
  EpisodePayload,
  EpisodeRecordPayload,
  FramesPayload,
  RunPayload,
  RunSummary,
} from "../../payloads.js";
import type { Source } from "../source.js";
import type { LocalFile } from "./drop.js";
import { type LocalRun, readRuns, stepsOf } from "./run-files.js";

/** An episode's frames replayed in the page, with a note on what they show (null: none). */
export interface ReplayedFrames {
  index: FramesIndex;
  url(name: string): string;
  note: string | null;
}

/**
 * Replays an episode in the page for its frames (./replayer.ts: MuJoCo in a Web Worker, where
 * the page is served with the playground), or says why it cannot.
 */
export type Replayer = (
  run: LocalRun,
  episode: EpisodeRecordPayload,
) => Promise<ReplayedFrames | { reason: string }>;

const NOT_BUILT_IN =
  "a run in progress with arms or defenses that are not built in: open it with `provael view` for its rates so far";

const NO_REPLAY =
  "this copy of the page carries no physics engine (the playground's copy, viewer/open.html, replays the built-in suites' episodes); open the run with `provael view` for every frame";

interface Bundle {
  answers: Map<string, unknown>;
  files: Map<string, Blob>;
}

type Origin =
  | { kind: "dir"; run: LocalRun }
  | { kind: "bundle"; bundle: Bundle; summary: RunSummary };

export interface FilesSource extends Source {
  /** Reads dropped files; answers how many runs they held. */
  add(files: LocalFile[]): Promise<number>;
}

/** A bundle's data file: `provaelData("<key>",<json>);`. */
function dataFile(text: string): [string, unknown] | null {
  const m = /^provaelData\(("(?:[^"\\]|\\.)*"),([\s\S]*)\);\s*$/.exec(text);
  if (!m) return null;
  return [JSON.parse(m[1] as string) as string, JSON.parse(m[2] as string)];
}

async function readBundles(all: LocalFile[]): Promise<{ bundles: Bundle[]; rest: LocalFile[] }> {
  const roots = all
    .filter((f) => f.path === "data/runs.js" || f.path.endsWith("/data/runs.js"))
    .map((f) => f.path.slice(0, -"data/runs.js".length));
  const bundles: Bundle[] = [];
  const taken = new Set<LocalFile>();
  for (const root of roots) {
    const answers = new Map<string, unknown>();
    const files = new Map<string, Blob>();
    for (const f of all) {
      if (!f.path.startsWith(root)) continue;
      const rel = f.path.slice(root.length);
      taken.add(f);
      if (rel.startsWith("data/") && rel.endsWith(".js")) {
        const got = dataFile(await f.file.text());
        if (got) answers.set(got[0], got[1]);
      } else if (rel.startsWith("files/")) files.set(rel, f.file);
    }
    bundles.push({ answers, files });
  }
  return { bundles, rest: all.filter((f) => !taken.has(f)) };
}

export function filesSource(facts: PageFacts, replayer?: Replayer): FilesSource {
  const origins = new Map<string, Origin>();
  const urls = new Map<Blob, string>();
  const url = (blob: Blob | undefined) => {
    if (!blob) return "";
    let u = urls.get(blob);
    if (!u) {
      u = URL.createObjectURL(blob);
      urls.set(blob, u);
    }
    return u;
  };
  const replayed = new Map<string, ReplayedFrames | { reason: string }>();

  const origin = (id: string): Origin => {
    const o = origins.get(id);
    if (!o) throw new Error(`no run ${id} among the dropped files`);
    return o;
  };
  /** A run in progress's report so far, built once (null, with why, when it cannot be). */
  const partials = new Map<LocalRun, { report: ReportFile | null; problem: string | null }>();
  const partialOf = (run: LocalRun) => {
    const j = run.journal;
    if (!j) return { report: null, problem: null };
    let p = partials.get(run);
    if (!p) {
      const arms = reportArmsFrom(facts, j.header.plan as PlanSpec);
      try {
        p = arms
          ? { report: partialReport(j.header, j.episodes, arms), problem: null }
          : { report: null, problem: NOT_BUILT_IN };
      } catch (e) {
        p = { report: null, problem: `its report so far cannot be built: ${(e as Error).message}` };
      }
      partials.set(run, p);
    }
    return p;
  };
  /** A finished run's report, or a run in progress's report so far (marked partial). */
  const got = (run: LocalRun) => {
    if (run.report) return { report: run.report, partial: false };
    const p = partialOf(run).report;
    return p ? { report: p, partial: true } : null;
  };
  const summaryOf = (run: LocalRun): RunSummary => {
    const s = summarize(run, run.read, got(run));
    const problem = partialOf(run).problem;
    return problem ? { ...s, problem } : s;
  };
  const fromBundle = <T>(b: Bundle, key: string): T => {
    if (!b.answers.has(key)) throw new Error(`not in this bundle: ${key}`);
    return b.answers.get(key) as T;
  };
  /** A run directory with episodes to show: finished, or in progress. */
  const readable = (id: string) => {
    const o = origin(id);
    const r = o.kind === "dir" ? got(o.run) : null;
    if (o.kind !== "dir" || !r) throw new Error(`run ${id} has no report and no journal to read`);
    return { run: o.run, report: r.report };
  };

  return {
    kind: "files",
    live: false,
    async add(files) {
      const { bundles, rest } = await readBundles(files);
      let n = 0;
      for (const bundle of bundles)
        for (const summary of (bundle.answers.get("runs") as RunSummary[] | undefined) ?? []) {
          origins.set(summary.id, { kind: "bundle", bundle, summary });
          n += 1;
        }
      for (const run of await readRuns(rest)) {
        origins.set(run.id, { kind: "dir", run });
        n += 1;
      }
      return n;
    },
    async runs() {
      return [...origins.values()].map((o) => (o.kind === "bundle" ? o.summary : summaryOf(o.run)));
    },
    async run(id): Promise<RunPayload> {
      const o = origin(id);
      if (o.kind === "bundle") return fromBundle(o.bundle, `runs/${id}`);
      const { run } = o;
      const r = got(run);
      return runAnswer(summaryOf(run), r, Object.keys(run.frames), () =>
        r
          ? caveatsWith(r.report, facts.caveats, {
              dir: run.label,
              via: viaOfManifest(run.read.state === "finished" ? run.read.manifest : null),
            }).map((c) => c.text)
          : [],
      );
    },
    async episode(id, cell): Promise<EpisodePayload> {
      const o = origin(id);
      if (o.kind === "bundle") return fromBundle(o.bundle, `runs/${id}/episode/${cell}`);
      const { run, report } = readable(id);
      const pair = findPair(report, cell);
      return episodeAnswer({
        run: summaryOf(run),
        report,
        pair,
        steps: await stepsOf(run),
        zones: facts.zones[report.run.suite]?.[pair.episode.task] ?? [],
        replay: { possible: false, reason: replayer ? null : NO_REPLAY },
        showcaseClip:
          run.clip && [pair.episode.cell, pair.twin?.cell].includes(run.clip.attacked)
            ? run.clip
            : null,
      });
    },
    async frames(id, cell): Promise<FramesPayload> {
      const o = origin(id);
      if (o.kind === "bundle") return fromBundle(o.bundle, `runs/${id}/frames/${cell}`);
      const { run, report } = readable(id);
      const { episode } = findPair(report, cell);
      const na = episode.termination === "not_applicable";
      let why = na ? "the arm was not applicable: nothing was played" : NO_REPLAY;
      if (replayer && !na) {
        const key = `${id}/${cell}`;
        if (!replayed.has(key)) replayed.set(key, await replayer(run, episode));
        const r = replayed.get(key) as ReplayedFrames | { reason: string };
        if ("index" in r) return { cell, index: r.index, reason: r.note };
        why = `it cannot be replayed in this page: ${r.reason}`;
      }
      const saved = run.frames[cell] ?? null;
      return {
        cell,
        index: saved,
        reason: saved ? `only the frames the run saved are shown: ${why}` : `no frames: ${why}`,
      };
    },
    async compare(a, b): Promise<ComparePayload> {
      const oa = origin(a);
      const ob = origin(b);
      if (oa.kind === "bundle" && ob.kind === "bundle" && oa.bundle === ob.bundle)
        return fromBundle(oa.bundle, `compare/${a}/${b}`);
      if (oa.kind === "bundle" || ob.kind === "bundle")
        throw new Error("compare two run directories, or two runs of one bundle");
      const A = readable(a);
      const B = readable(b);
      return compareAnswer(
        { summary: summaryOf(A.run), report: A.report },
        { summary: summaryOf(B.run), report: B.report },
      );
    },
    frameUrl(id, cell, name) {
      const o = origin(id);
      if (o.kind === "bundle") return url(o.bundle.files.get(`files/${id}/${cell}/${name}`));
      const r = replayed.get(`${id}/${cell}`);
      return r && "url" in r
        ? r.url(name)
        : url(o.run.files.get(`${RUN_FILES.frames}/${cell}/${name}`));
    },
    showcaseUrl(id) {
      const o = origins.get(id);
      if (!o) return null;
      const blob =
        o.kind === "bundle"
          ? o.bundle.files.get(`files/${id}/${RUN_FILES.showcaseClip}`)
          : o.run.files.get(RUN_FILES.showcaseClip);
      return url(blob) || null;
    },
    videoUrl: () => null,
  };
}
