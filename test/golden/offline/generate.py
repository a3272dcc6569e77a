#!/usr/bin/env python3
"""Reference values for the offline study's numbers (src/offline/study/measure.ts), from numpy,
exact fractions and statsmodels.

Writes reference.json beside this file; reference.test.ts reads only the JSON (CI has no Python).

  /usr/bin/python3 test/golden/offline/generate.py   (Debian python3-numpy, python3-statsmodels)

- envelope: for benign commands (n x D, stored as inputs) and a target, the per-tail level
  beta = target / (2D), the rank k = ceil((n+1)(1-beta)) (exact fractions), and per dimension
  low = the k-th largest value, high = the k-th smallest (numpy.sort);
- quantiles: median and p95 of divergences, numpy.quantile's default ("linear", type 7);
- exits: Wilson 95% intervals of exit counts (statsmodels proportion_confint, method "wilson").
"""

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import statsmodels
from statsmodels.stats.proportion import proportion_confint

OUT = Path(__file__).with_name("reference.json")
rng = np.random.default_rng(20261202)


def envelope_case(n, d, target):
    rows = np.round(rng.normal(size=(n, d)) * rng.uniform(0.1, 2.0, size=d), 6)
    beta = Fraction(target) / (2 * d)
    k = math.ceil((n + 1) * (1 - beta))
    s = np.sort(rows, axis=0)
    return {
        "rows": rows.tolist(),
        "target": target,
        "tail_level": float(beta),
        "rank": k if k <= n else None,
        "low": s[n - k].tolist() if k <= n else None,
        "high": s[k - 1].tolist() if k <= n else None,
    }


def quantile_case(n):
    v = np.round(np.abs(rng.normal(size=n)) * 1.7, 6)
    return {"values": v.tolist(), "median": float(np.quantile(v, 0.5)), "p95": float(np.quantile(v, 0.95))}


def exits_case(s, n):
    low, high = proportion_confint(s, n, alpha=0.05, method="wilson")
    return {"successes": s, "n": n, "low": float(low), "high": float(high)}


cases = {
    "generator": {"numpy": np.__version__, "statsmodels": statsmodels.__version__},
    "envelope": [
        envelope_case(310, 5, 0.05),
        envelope_case(100, 2, 0.1),
        envelope_case(40, 1, 0.05),
        envelope_case(30, 3, 0.05),
    ],
    "quantiles": [quantile_case(n) for n in (1, 2, 7, 313)],
    "exits": [exits_case(s, n) for s, n in ((0, 312), (1, 313), (265, 313), (10, 12), (0, 0 + 1))],
}
OUT.write_text(json.dumps(cases, indent=1) + "\n")
print(f"wrote {OUT}")
