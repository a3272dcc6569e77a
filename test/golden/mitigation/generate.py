#!/usr/bin/env python3
"""Reference values for the mitigation statistics (src/stats/paired.ts, the paired reduction test).

Writes reference.json beside this file; reference.test.ts only reads it. Regenerate with
Debian's python3-scipy and python3-statsmodels:  /usr/bin/python3 test/golden/mitigation/generate.py

- interval: Newcombe's hybrid score interval for a paired difference (1998, method 10), written
  here independently from the TypeScript, over statsmodels' Wilson limits;
- p: the one-sided exact McNemar test of a reduction, scipy's binomtest on the discordant pairs.
"""

import json
import math
import platform
from pathlib import Path

import scipy
import statsmodels
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

OUT = Path(__file__).with_name("reference.json")


def newcombe(both, first, second, neither, confidence):
    n = both + first + second + neither
    s1, s2 = both + first, both + second
    p1, p2 = s1 / n, s2 / n
    alpha = 1 - confidence
    l1, u1 = proportion_confint(s1, n, alpha=alpha, method="wilson")
    l2, u2 = proportion_confint(s2, n, alpha=alpha, method="wilson")
    margins = (both + first) * (second + neither) * (both + second) * (first + neither)
    phi = 0.0 if margins == 0 else (both * neither - first * second) / math.sqrt(margins)
    theta = p1 - p2
    dl = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    du = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return [theta, max(-1.0, theta - dl), min(1.0, theta + du)]


TABLES = [
    (2, 8, 1, 9),
    (0, 10, 0, 10),
    (5, 0, 0, 15),
    (12, 3, 0, 105),
    (0, 0, 0, 30),
    (30, 0, 0, 0),
    (4, 1, 6, 9),
    (40, 25, 5, 50),
    (1, 1, 1, 1),
    (0, 3, 2, 0),
]

cases = []
for t in TABLES:
    for confidence in (0.95, 0.9):
        both, first, second, neither = t
        b, c = first, second
        p = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5, alternative="greater").pvalue
        cases.append(
            {
                "table": {"both": both, "first": first, "second": second, "neither": neither},
                "confidence": confidence,
                "interval": newcombe(both, first, second, neither, confidence),
                "reduction_p": float(p),
            }
        )

OUT.write_text(
    json.dumps(
        {
            "generator": "test/golden/mitigation/generate.py",
            "versions": {
                "python": platform.python_version(),
                "scipy": scipy.__version__,
                "statsmodels": statsmodels.__version__,
            },
            "cases": cases,
        },
        indent=2,
    )
    + "\n"
)
print(f"wrote {OUT} ({len(cases)} cases)")
