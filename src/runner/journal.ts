/**
 * The journal is the run's source of truth: one JSON line per finished episode, appended and
 * fsync'd before the episode counts. A crash can only lose the line being written, and a
 * truncated last line is dropped (its cell reruns) on resume.
 */
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  writeSync,
} from "node:fs";
import { ProvaelError } from "../core/errors.js";
import type { EpisodeRecord, TrajectoryStep } from "./episode.js";
import type { PlanSpec } from "./plan.js";

export const JOURNAL_FORMAT = "provael.journal/1";
export const JOURNAL_FILE = "journal.jsonl";

export interface JournalHeader {
  type: "header";
  format: typeof JOURNAL_FORMAT;
  tool_version: string;
  plan: PlanSpec;
  plan_digest: string;
  /** Which slice of the plan this directory holds ("k/N"), or null for all of it. */
  shard: string | null;
  /** SHA-256 of the weights the policy loaded (null when it has none). */
  policy_digest: string | null;
}

export interface JournalEpisode {
  type: "episode";
  record: EpisodeRecord;
  trajectory: TrajectoryStep[];
}

export interface JournalContents {
  header: JournalHeader;
  episodes: JournalEpisode[];
  /** Bytes of complete lines; anything after it was a torn write. */
  validBytes: number;
  droppedTail: boolean;
}

/** Reads a journal, dropping a torn last line; a corrupt line elsewhere is an error. */
export function readJournal(path: string): JournalContents {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read journal ${path}`, { cause: e });
  }
  const lines = text.split("\n");
  const complete = text.endsWith("\n") ? lines.slice(0, -1) : lines.slice(0, -1);
  const tail = text.endsWith("\n") ? "" : (lines[lines.length - 1] ?? "");
  let validBytes = 0;
  let header: JournalHeader | undefined;
  const episodes: JournalEpisode[] = [];
  let droppedTail = tail.length > 0;
  complete.forEach((line, i) => {
    let parsed: JournalHeader | JournalEpisode;
    try {
      parsed = JSON.parse(line) as JournalHeader | JournalEpisode;
    } catch (e) {
      if (i === complete.length - 1 && tail === "") {
        // A torn write that happened to end in a newline byte: treat it like a torn tail.
        droppedTail = true;
        return;
      }
      throw new ProvaelError(
        "run/journal-corrupt",
        `journal ${path} line ${i + 1} is not valid JSON`,
        {
          cause: e,
          hint: "the journal was edited or damaged; start a new run directory",
        },
      );
    }
    if (i === 0) {
      if (parsed.type !== "header" || parsed.format !== JOURNAL_FORMAT) {
        throw new ProvaelError(
          "run/journal-corrupt",
          `journal ${path} has no ${JOURNAL_FORMAT} header`,
        );
      }
      header = parsed;
    } else if (parsed.type === "episode") {
      episodes.push(parsed);
    }
    validBytes += Buffer.byteLength(line) + 1;
  });
  if (!header) {
    throw new ProvaelError("run/journal-corrupt", `journal ${path} is empty`, {
      hint: "remove the directory or choose another --out",
    });
  }
  return { header, episodes, validBytes, droppedTail };
}

/**
 * An append-only journal writer. Every line is written at once; the data is forced to disk at
 * most every SYNC_INTERVAL_MS and always on close (group commit), because an fsync per episode
 * costs milliseconds on slow disks. A crash can lose only lines written since the last sync,
 * and those cells simply run again on resume: nothing is reported that is not on disk.
 */
export class JournalWriter {
  private fd: number;
  private lastSync = 0;
  private dirty = false;
  static SYNC_INTERVAL_MS = 200;

  private constructor(fd: number) {
    this.fd = fd;
  }

  /** Creates a new journal with its header. */
  static create(path: string, header: JournalHeader): JournalWriter {
    if (existsSync(path))
      throw new ProvaelError("run/out-exists", `journal ${path} already exists`);
    const w = new JournalWriter(openSync(path, "wx"));
    w.writeLine(header);
    return w;
  }

  /** Reopens a journal for appending, cutting off a torn last line first. */
  static reopen(path: string, validBytes: number): JournalWriter {
    const fd = openSync(path, "r+");
    ftruncateSync(fd, validBytes);
    fsyncSync(fd);
    closeSync(fd);
    return new JournalWriter(openSync(path, "a"));
  }

  append(entry: JournalEpisode): void {
    this.writeLine(entry);
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

  private writeLine(value: unknown): void {
    const line = `${JSON.stringify(value)}\n`;
    writeSync(this.fd, line);
    this.dirty = true;
    if (performance.now() - this.lastSync >= JournalWriter.SYNC_INTERVAL_MS) this.sync();
  }
}
