/** The viewer's pages, by route: what `startRouter` draws. */
import { comparePage } from "./compare.js";
import { episodePage } from "./episode.js";
import type { Pages } from "./router.js";
import { runPage } from "./run.js";
import { runsPage } from "./runs.js";

export const pages: Pages = {
  runs: runsPage,
  run: runPage,
  episode: episodePage,
  compare: comparePage,
};
