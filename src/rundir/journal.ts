/**
 * The journal is the run's source of truth: one JSON line per finished episode, appended and
 * fsync'd before the episode counts. A crash can only lose the line being written, and a
 * truncated last line is dropped (its cell reruns) on resume. Every line carries `sum`, the
 * SHA-256 of its canonical content (RFC 8785, `sum` left out): a byte changed inside a complete
 * line would otherwise parse and silently change the report.
 */
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
} from "node:fs";
import { z } from "zod";
import { sha256 } from "../core/digest.js";
import type { EpisodeRecord, TrajectoryStep } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import { differingFields, type PlanSpec, planFields } from "../core/plan.js";
import { JOURNAL_FORMAT, REFUSED_JOURNAL_FORMATS } from "../core/protocol.js";
import { describeIssues } from "../core/zod-issues.js";
import { journalHeader, journalLine } from "./journal-lines.js";
import { type JournalEpisodeLine, type JournalHeaderFile, lineSum } from "./schema/journal.js";

export { JOURNAL_FORMAT, journalHeader, journalLine, lineSum };

/**
 * A journal's header and episode lines as the runner writes them (before `sum` is added): the
 * types of the journal schema (src/rundir/schema/journal.ts), not a second description.
 */
export type JournalHeader = Omit<JournalHeaderFile, "sum">;
/** What names a bridged run: the benchmark profile it was judged with. */
export type BridgeRun = NonNullable<JournalHeader["bridge"]>;
export type JournalEpisode = Omit<JournalEpisodeLine, "sum">;
/** An episode as a writer is given it: the writer stamps the plan it plays under. */
export type JournalEpisodeEntry = Omit<JournalEpisode, "plan_fields">;

/** Where one episode's line sits in a journal file, and what it says (minus its trajectory). */
export interface JournalEntry {
  record: EpisodeRecord;
  path: string;
  offset: number;
  length: number;
  /** SHA-256 of the line's bytes: equal lines mean equal episodes. */
  lineDigest: string;
}

/** A finished cell: its record, and where its journal line (with the trajectory) sits. */
export type FinishedCell = Pick<JournalEntry, "record" | "path" | "offset" | "length">;

/**
 * The line that stands for each cell: the first finished one, or the last errored one while none
 * has finished (a later line for a cell is a retry of an errored one).
 */
export function latestPerCell(entries: readonly JournalEntry[]): Map<string, JournalEntry> {
  const out = new Map<string, JournalEntry>();
  for (const e of entries) {
    const prior = out.get(e.record.cell);
    if (!prior || prior.record.error !== null) out.set(e.record.cell, e);
  }
  return out;
}

export interface JournalScan {
  header: JournalHeader;
  entries: JournalEntry[];
  /** Bytes of complete lines; anything after it was a torn write. */
  validBytes: number;
  droppedTail: boolean;
}

const CHUNK = 1 << 20;
const corruptHint = "the journal was edited or damaged; start a new run directory";

/** What resume reads of each line; a line without it (`null`, `{"type":"episode"}`) is corrupt. */
const headerShape = z
  .object({ type: z.literal("header"), format: z.string(), plan: z.object({}).loose() })
  .loose();
const episodeShape = z
  .object({
    type: z.literal("episode"),
    plan_fields: z.record(z.string(), z.string()),
    record: z
      .object({
        cell: z.string(),
        task: z.string(),
        arm: z.string(),
        seed: z.number().int(),
        repeat: z.number().int(),
        error: z.object({ code: z.string(), message: z.string() }).loose().nullable(),
      })
      .loose(),
    trajectory: z.array(z.unknown()),
  })
  .loose();

/**
 * Streams a journal line by line, keeping each episode's record and the position of its line but
 * not its trajectory, so memory stays flat however long the run. A torn last line is dropped; a
 * corrupt line elsewhere is an error.
 */
export function scanJournal(path: string): JournalScan {
  const fd = openJournal(path);
  let header: JournalHeader | undefined;
  let headerFields: Record<string, string> = {};
  const entries: JournalEntry[] = [];
  let validBytes = 0;
  let droppedTail = false;
  let lineNo = 0;
  let pending: Buffer[] = [];
  let pendingStart = 0;
  let position = 0;
  const buf = Buffer.allocUnsafe(CHUNK);
  // Lines are parsed one step late so that the last complete line can be judged a torn write.
  let previous: { bytes: Buffer; offset: number } | null = null;
  const handle = (bytes: Buffer, offset: number, isLast: boolean) => {
    lineNo += 1;
    let parsed: JournalHeader | JournalEpisode;
    try {
      parsed = JSON.parse(bytes.toString("utf8")) as JournalHeader | JournalEpisode;
    } catch (e) {
      if (isLast) {
        droppedTail = true;
        return;
      }
      throw new ProvaelError(
        "run/journal-corrupt",
        `journal ${path} line ${lineNo} is not valid JSON`,
        {
          cause: e,
          hint: corruptHint,
        },
      );
    }
    if (lineNo === 1) checkFormat(path, parsed);
    const shape = lineNo === 1 ? headerShape : episodeShape;
    const checked = shape.safeParse(parsed);
    if (!checked.success) {
      throw new ProvaelError(
        "run/journal-corrupt",
        `journal ${path} line ${lineNo} is not a journal ${lineNo === 1 ? "header" : "episode"} line (${describeIssues(checked.error, "(the line)")})`,
        {
          details: { line: lineNo },
          hint: corruptHint,
        },
      );
    }
    parsed = checkSum(path, lineNo, parsed);
    if (lineNo === 1) {
      if (parsed.type !== "header" || parsed.format !== JOURNAL_FORMAT) {
        throw new ProvaelError(
          "run/journal-corrupt",
          `journal ${path} has no ${JOURNAL_FORMAT} header`,
        );
      }
      header = parsed;
      headerFields = planFields(parsed.plan);
    } else if (parsed.type === "episode") {
      checkPlayedUnder(path, lineNo, headerFields, parsed.plan_fields, header?.plan);
      entries.push({
        record: parsed.record,
        path,
        offset,
        length: bytes.length,
        lineDigest: sha256(bytes),
      });
    }
    validBytes = offset + bytes.length + 1;
  };
  try {
    for (;;) {
      const n = readJournalBytes(path, fd, buf, position);
      if (n === 0) break;
      let from = 0;
      for (let i = 0; i < n; i++) {
        if (buf[i] !== 0x0a) continue;
        pending.push(Buffer.from(buf.subarray(from, i)));
        const line = Buffer.concat(pending);
        if (previous) handle(previous.bytes, previous.offset, false);
        previous = { bytes: line, offset: pendingStart };
        pending = [];
        pendingStart = position + i + 1;
        from = i + 1;
      }
      if (from < n) pending.push(Buffer.from(buf.subarray(from, n)));
      position += n;
    }
  } finally {
    closeSync(fd);
  }
  const tail = Buffer.concat(pending);
  if (previous) handle(previous.bytes, previous.offset, tail.length === 0);
  if (tail.length > 0) droppedTail = true;
  if (!header) {
    throw new ProvaelError("run/journal-corrupt", `journal ${path} is empty`, {
      hint: "remove the directory or choose another --out",
    });
  }
  return { header, entries, validBytes, droppedTail };
}

/**
 * Opens a journal for reading. Anything but a regular file (a directory, a device) is refused as
 * bad input, with what it is, before a read fails on it.
 */
function openJournal(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read journal ${path}`, {
      cause: e,
      details: { path, reason: (e as NodeJS.ErrnoException).code ?? String(e) },
      hint: "pass the directory of a Provael run; its journal.jsonl must be a readable file",
    });
  }
  const st = fstatSync(fd);
  if (!st.isFile()) {
    closeSync(fd);
    throw new ProvaelError(
      "io/read",
      `journal ${path} is ${st.isDirectory() ? "a directory" : "not a regular file"}, not a journal`,
      {
        details: { path },
        hint: "the run directory was damaged; remove what stands in journal.jsonl's place or start a new run directory",
      },
    );
  }
  return fd;
}

function readJournalBytes(path: string, fd: number, buf: Buffer, position: number): number {
  try {
    return readSync(fd, buf, 0, buf.length, position);
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read journal ${path}`, {
      cause: e,
      details: { path, reason: (e as NodeJS.ErrnoException).code ?? String(e) },
    });
  }
}

/**
 * Refuses an episode line played under another plan than its journal's header: a line copied in
 * from another run (another `--horizon`, `--termination`, `--scene-pin`, …) would otherwise be
 * counted as this plan's episode. Names the line and the differing fields.
 */
export function checkPlayedUnder(
  path: string,
  lineNo: number,
  expected: Record<string, string>,
  actual: Record<string, string>,
  plan?: PlanSpec,
): void {
  const fields = differingFields(expected, actual);
  if (fields.length === 0) return;
  const shown = fields
    .map((f) => {
      const v = plan ? (plan as Record<string, unknown>)[f] : undefined;
      return v === undefined ? f : `${f} (the header's: ${JSON.stringify(v).slice(0, 60)})`;
    })
    .join(", ");
  throw new ProvaelError(
    "run/plan-mismatch",
    `journal ${path} line ${lineNo} was played under another plan than the journal's: it differs in ${shown}`,
    {
      details: { line: lineNo, fields },
      hint: "the line was copied in from another run; remove it (its cell is played again on --resume) or start a new run directory",
    },
  );
}

/** An older journal format is named as such, with why, so its owner knows why it is refused. */
function checkFormat(path: string, parsed: unknown): void {
  const format = (parsed as { format?: unknown } | null)?.format;
  const why = typeof format === "string" ? REFUSED_JOURNAL_FORMATS[format] : undefined;
  if (why !== undefined) {
    throw new ProvaelError("run/journal-corrupt", `journal ${path} is ${format}, ${why}`, {
      details: { line: 1, format },
      hint: "finish or merge it with the Provael version that wrote it (its report.json stays readable), or start a new run directory",
    });
  }
}

/** Verifies a parsed line's `sum` against its canonical content; returns the content. */
function checkSum<T extends JournalHeader | JournalEpisode>(
  path: string,
  lineNo: number,
  parsed: T,
): T {
  const { sum, ...content } = parsed as T & { sum?: unknown };
  if (typeof sum !== "string") {
    throw new ProvaelError(
      "run/journal-corrupt",
      `journal ${path} line ${lineNo} carries no checksum (sum)`,
      { details: { line: lineNo }, hint: corruptHint },
    );
  }
  let actual: string;
  try {
    actual = lineSum(content);
  } catch (e) {
    throw new ProvaelError(
      "run/journal-corrupt",
      `journal ${path} line ${lineNo} cannot be checksummed`,
      { cause: e, details: { line: lineNo }, hint: corruptHint },
    );
  }
  if (actual !== sum) {
    throw new ProvaelError(
      "run/journal-corrupt",
      `journal ${path} line ${lineNo} fails its checksum: it was changed after it was written`,
      { details: { line: lineNo, expected: sum, actual }, hint: corruptHint },
    );
  }
  return content as T;
}

/** The trajectory of one journalled episode, read back from its line. */
export function readTrajectory(
  entry: Pick<JournalEntry, "path" | "offset" | "length">,
): TrajectoryStep[] {
  const fd = openSync(entry.path, "r");
  try {
    const bytes = Buffer.allocUnsafe(entry.length);
    readSync(fd, bytes, 0, entry.length, entry.offset);
    return (JSON.parse(bytes.toString("utf8")) as JournalEpisode).trajectory;
  } finally {
    closeSync(fd);
  }
}

export interface JournalContents {
  header: JournalHeader;
  episodes: JournalEpisode[];
  validBytes: number;
  droppedTail: boolean;
}

/** Reads a whole journal into memory (small runs, tools and tests); see `scanJournal`. */
export function readJournal(path: string): JournalContents {
  const scan = scanJournal(path);
  // Every line was checked to carry its header's plan.
  const plan_fields = planFields(scan.header.plan);
  return {
    header: scan.header,
    episodes: scan.entries.map((e) => ({
      type: "episode",
      plan_fields,
      record: e.record,
      trajectory: readTrajectory(e),
    })),
    validBytes: scan.validBytes,
    droppedTail: scan.droppedTail,
  };
}

/**
 * An append-only journal writer. Every line is written at once; the data is forced to disk at
 * most every SYNC_INTERVAL_MS and always on close (group commit), because an fsync per episode
 * costs milliseconds on slow disks. A crash can lose only lines written since the last sync,
 * and those cells simply run again on resume: nothing is reported that is not on disk.
 */
export class JournalWriter {
  private fd: number;
  private position: number;
  private lastSync = 0;
  private dirty = false;
  /** The plan every episode line is stamped with (`plan_fields`). */
  private readonly fields: Record<string, string>;
  static SYNC_INTERVAL_MS = 200;

  private constructor(fd: number, position: number, plan: PlanSpec) {
    this.fd = fd;
    this.position = position;
    this.fields = planFields(plan);
  }

  /** Creates a new journal with its header. */
  static create(path: string, header: JournalHeader): JournalWriter {
    if (existsSync(path))
      throw new ProvaelError("run/out-exists", `journal ${path} already exists`);
    const w = new JournalWriter(openSync(path, "wx"), 0, header.plan);
    w.writeLine(header);
    return w;
  }

  /** Reopens a journal of `plan` for appending, cutting off a torn last line first. */
  static reopen(path: string, validBytes: number, plan: PlanSpec): JournalWriter {
    const fd = openSync(path, "r+");
    ftruncateSync(fd, validBytes);
    fsyncSync(fd);
    closeSync(fd);
    return new JournalWriter(openSync(path, "a"), validBytes, plan);
  }

  /** Appends an episode, stamped with the writer's plan, and says where its line landed. */
  append(entry: JournalEpisodeEntry): { offset: number; length: number } {
    const { type, record, trajectory } = entry;
    return this.writeLine({ type, plan_fields: this.fields, record, trajectory });
  }

  /** Forces everything written so far to disk. */
  sync(): void {
    if (!this.dirty) return;
    fdatasyncSync(this.fd);
    this.dirty = false;
    this.lastSync = performance.now();
  }

  close(): void {
    this.sync();
    closeSync(this.fd);
  }

  private writeLine(value: JournalHeader | JournalEpisode): { offset: number; length: number } {
    // A header copied from a scanned journal (merge) carries no stale sum: the content is summed.
    const line = Buffer.from(journalLine(value));
    writeSync(this.fd, line);
    const offset = this.position;
    this.position += line.length;
    this.dirty = true;
    if (performance.now() - this.lastSync >= JournalWriter.SYNC_INTERVAL_MS) this.sync();
    return { offset, length: line.length - 1 };
  }
}
