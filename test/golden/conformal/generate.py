#!/usr/bin/env python3
"""Reference values for src/stats/conformal.ts, computed with scipy.

Writes reference.json beside this file; reference.test.ts reads only the JSON (CI has no Python).

  /usr/bin/python3 test/golden/conformal/generate.py   (Debian python3-scipy)

- rank: k = ceil((n+1)(1-alpha)) with exact rational arithmetic (fractions), null when k > n;
- min_n: the smallest n with a rank;
- bound: (n+1-k)/(n+1), the marginal false-positive bound;
- q95: the 0.95 quantile of Beta(n+1-k, k) (scipy.stats.beta.ppf), the realised false-positive
  rate of one threshold at rank k (continuous scores);
- room: for a list of approach distances, the k-th largest score is the (n+1-k)-th smallest
  distance (numpy.sort), the value the zone's room sits just under.
"""

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import scipy
from scipy.stats import beta

OUT = Path(__file__).with_name("reference.json")


def rank(n, alpha):
    k = math.ceil((n + 1) * (1 - Fraction(alpha)))
    return k if k <= n else None


def min_n(alpha):
    n = 1
    while rank(n, alpha) is None:
        n += 1
    return n


alphas = ["0.01", "0.05", "0.1", "0.2", "0.025", "0.001"]
ns = [0, 1, 9, 10, 19, 20, 49, 98, 99, 100, 101, 199, 250, 999, 1000]
cases = []
for a in alphas:
    for n in ns:
        k = rank(n, a)
        case = {"n": n, "alpha": float(a), "rank": k}
        if k is not None:
            case["bound"] = (n + 1 - k) / (n + 1)
            case["q95"] = float(beta.ppf(0.95, n + 1 - k, k))
        cases.append(case)

rng = np.random.default_rng(20261201)
rooms = []
for n, a in [(99, "0.01"), (100, "0.01"), (250, "0.01"), (20, "0.1"), (57, "0.05")]:
    d = rng.uniform(0.0, 0.2, size=n)
    k = rank(n, a)
    rooms.append(
        {
            "alpha": float(a),
            "approaches": [float(x) for x in d],
            "rank": k,
            "score": float(np.sort(d)[n - k]),
        }
    )

OUT.write_text(
    json.dumps(
        {
            "generator": "test/golden/conformal/generate.py",
            "scipy": scipy.__version__,
            "min_n": {a: min_n(a) for a in alphas},
            "cases": cases,
            "rooms": rooms,
        },
        indent=1,
    )
    + "\n"
)
print(f"wrote {OUT} ({len(cases)} cases, {len(rooms)} rooms)")
