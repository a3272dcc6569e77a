import { afterAll } from "vitest";
import { removeTempDirs } from "./tmp.js";

// A setup file runs in each test file's own module graph, so `tempDir` here is the one the file
// imported and this removes exactly that file's directories.
afterAll(removeTempDirs);
