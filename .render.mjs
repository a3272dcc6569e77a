import { readFileSync, writeFileSync } from "node:fs";
import { renderHtml } from "./dist/report/html.js";
const dir = process.argv[2];
const report = JSON.parse(readFileSync(dir + "/report.json", "utf8"));
writeFileSync(dir + "/report.html", await renderHtml(report, dir));
