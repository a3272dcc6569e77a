import { afterAll } from "vitest";
import { removeTempDirs } from "./tmp.js";

// A setup file runs once per test file, after it: test files run one after another in a
// worker and share its modules (isolate: false), so this removes the directories the file that
// just ended made.
afterAll(removeTempDirs);
