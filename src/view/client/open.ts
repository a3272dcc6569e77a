/// <reference lib="dom" />
/**
 * The entry of the page that opens run directories in the browser (src/view/open-page.ts):
 * files dropped on it or picked with its inputs are read here, never sent anywhere, and shown
 * with the viewer's own pages.
 */
import { filesOfDrop, filesOfInput, type LocalFile } from "./files/drop.js";
import { FACTS } from "./files/facts.js";
import { workerReplayer } from "./files/replayer.js";
import { filesSource } from "./files/source.js";
import { pages } from "./pages.js";
import { startRouter } from "./router.js";

// Served with the playground, the page names the playground's replay worker (open-page.ts).
const worker = document.body.dataset.replay;
const source = filesSource(FACTS, worker ? workerReplayer(worker) : undefined);
const route = startRouter(source, pages);
const status = () => document.getElementById("open-status") as HTMLElement;

async function take(read: Promise<LocalFile[]>): Promise<void> {
  status().textContent = "Reading…";
  try {
    const files = await read;
    const n = await source.add(files);
    status().textContent =
      n === 0
        ? `No run among ${files.length} file(s): a run directory holds report.json (or journal.jsonl).`
        : `Read ${n} run(s) from ${files.length} file(s).`;
    document.body.dataset.runs = String((await source.runs()).length);
  } catch (e) {
    status().textContent = `Cannot read these files: ${(e as Error).message}`;
  }
  if (location.hash === "" || location.hash === "#/") route();
  else location.hash = "#/";
}

function input(id: string): void {
  const el = document.getElementById(id) as HTMLInputElement;
  el.addEventListener("change", () => {
    if (el.files && el.files.length > 0) void take(filesOfInput(el.files));
  });
}

window.addEventListener("DOMContentLoaded", () => {
  input("open-dir");
  input("open-files");
  document.addEventListener("dragover", (e) => {
    e.preventDefault();
    document.body.classList.add("dragging");
  });
  document.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
  document.addEventListener("drop", (e) => {
    e.preventDefault();
    document.body.classList.remove("dragging");
    if (e.dataTransfer) void take(filesOfDrop(e.dataTransfer));
  });
  route();
});
