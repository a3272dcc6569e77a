#!/usr/bin/env python3
"""Reference values for Provael's src/stats, computed with scipy and statsmodels.

Writes reference.json beside this file. CI never runs this script: the TypeScript test
(reference.test.ts) only reads the JSON. See UPDATE.md for when and how to regenerate.

Usage: python3 test/golden/stats/generate.py   (needs numpy, scipy, statsmodels)
"""

import json
import math
import platform
import sys
from pathlib import Path

import mpmath as mp
import numpy as np
import scipy
import statsmodels
from scipy import special
from scipy.optimize import brentq
from scipy.stats import binomtest, fisher_exact
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

OUT = Path(__file__).with_name("reference.json")
TOLERANCE = 1e-9
# scipy/statsmodels are the reference; mpmath at 50 digits is the arbiter. Where the library value
# is further than this (the looser of absolute and relative) from the 50-digit value, the case
# keeps the library value under "library" and takes the 50-digit one as "expected".
ARBITER_TOLERANCE = 1e-11
mp.mp.dps = 50
OVERRIDES = []


def looser_error(actual, expected):
    """The looser of absolute and relative error, as reference.test.ts measures it."""
    diff = abs(actual - expected)
    return diff if diff == 0 else min(diff, diff / abs(expected)) if expected != 0 else diff


def arbitrate(group, args, library, exact):
    """Returns the case record, preferring the high-precision value when the library is off."""
    exact = [float(v) for v in exact] if isinstance(exact, list) else float(exact)
    lib_list = library if isinstance(library, list) else [library]
    exact_list = exact if isinstance(exact, list) else [exact]
    worst = max(looser_error(a, e) for a, e in zip(lib_list, exact_list))
    if worst <= ARBITER_TOLERANCE:
        return {"args": args, "expected": library}
    OVERRIDES.append((group, args, worst))
    return {"args": args, "expected": exact, "library": library, "source": "mpmath"}


def counts_for(n):
    """Success counts worth checking for a sample of size n: edges, near-edges and the middle."""
    picks = {0, 1, n // 3, n // 2, n - 1, n}
    return sorted(s for s in picks if 0 <= s <= n)


def mp_log_beta(a, b):
    return mp.loggamma(a) + mp.loggamma(b) - mp.loggamma(mp.mpf(a) + b)


def log_gamma_cases():
    xs = [1e-300, 1e-10, 1e-5, 0.1, 0.5, 0.7499, 0.75, 0.9, 0.999, 1.0, 1.0001, 1.25, 1.2501,
          1.5, 1.7499, 1.75, 1.9, 1.9999, 2.0, 2.0001, 2.25, 2.2501, 2.5, 3.0, 5.0, 7.3, 10.0,
          14.9, 15.0, 15.1, 20.5, 50.0, 100.0, 170.5, 1000.0, 12345.678, 1e5, 1e6 + 0.5, 1e7,
          1e7 + 1, 1e10, 1e15]
    return [arbitrate("logGamma", [x], float(special.gammaln(x)), mp.loggamma(mp.mpf(x)))
            for x in xs]


def log_beta_cases():
    pairs = [(0.5, 0.5), (1, 1), (2, 3), (3, 4), (10, 20), (14, 16), (14.5, 15.5), (20, 30),
             (100.5, 3.2), (1, 1e7), (5, 1e7 + 1), (1e3, 1e5), (1e7, 1e7), (5e6 + 1, 5e6 + 1),
             (3333334, 6666668), (1e-3, 50)]
    return [arbitrate("logBeta", [a, b], float(special.betaln(a, b)),
                      mp_log_beta(mp.mpf(a), mp.mpf(b))) for a, b in pairs]


def log_binomial_cases():
    pairs = [(0, 0), (5, 0), (5, 5), (10, 3), (100, 50), (1000, 1), (1000, 999), (10**7, 5),
             (10**7, 5 * 10**6), (10**7, 3333333), (123456, 7890)]
    out = []
    for n, k in pairs:
        # ln C(n, k) = −ln(n + 1) − ln B(k + 1, n − k + 1).
        value = 0.0 if k in (0, n) else float(-math.log(n + 1) - special.betaln(k + 1, n - k + 1))
        exact = mp.log(mp.binomial(n, k))
        out.append(arbitrate("logBinomial", [n, k], value, exact))
    return out


def normal_quantile_cases():
    ps = [1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.025, 0.05, 0.0749, 0.075, 0.0751,
          0.1, 0.3, 0.5, 0.7, 0.9, 0.925, 0.95, 0.975, 0.99, 0.999, 1 - 1e-10]
    out = []
    for p in ps:
        # Invert Φ at 50 digits by Newton from scipy's value (erfinv(2p − 1) loses tiny p).
        x = mp.mpf(float(special.ndtri(p)))
        for _ in range(8):
            x -= (mp.ncdf(x) - mp.mpf(p)) / mp.npdf(x)
        out.append(arbitrate("normalQuantile", [p], float(special.ndtri(p)), x))
    return out


def mp_wilson(s, n, confidence):
    z = mp.sqrt(2) * mp.erfinv(mp.mpf(1) - mp.mpf(1 - confidence))
    p = mp.mpf(s) / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * mp.sqrt(p * (1 - p) / n + z * z / (4 * mp.mpf(n) ** 2)) / denom
    low = mp.mpf(0) if s == 0 else max(mp.mpf(0), centre - half)
    high = mp.mpf(1) if s == n else min(mp.mpf(1), centre + half)
    return [low, high]


def wilson_cases():
    out = []
    for n in [1, 2, 5, 10, 20, 50, 100, 1000, 10**5, 10**7]:
        for s in counts_for(n):
            for confidence in [0.95, 0.9, 0.99]:
                alpha = 1 - confidence
                low, high = proportion_confint(s, n, alpha=alpha, method="wilson")
                out.append(arbitrate("wilsonInterval", [s, n, confidence],
                                     [float(low), float(high)], mp_wilson(s, n, confidence)))
    return out


def anytime_log_m(p, s, n):
    """ln of Robbins' Beta(1,1)-mixture martingale: ln B(s+1, n−s+1) − s ln p − (n−s) ln(1−p)."""
    value = special.betaln(s + 1, n - s + 1)
    if s > 0:
        value -= s * math.log(p)
    if n - s > 0:
        value -= (n - s) * math.log1p(-p)
    return value


def anytime_low(s, n, alpha):
    if s == 0:
        return 0.0
    threshold = math.log(1 / alpha)
    g = lambda p: anytime_log_m(p, s, n) - threshold  # noqa: E731
    return brentq(g, 1e-300, s / n, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=1000)


def mp_anytime_low(s, n, alpha):
    if s == 0:
        return mp.mpf(0)
    log_b = mp_log_beta(s + 1, n - s + 1)
    threshold = -mp.log(mp.mpf(alpha))
    inside, outside = mp.mpf(s) / n, mp.mpf(0)
    for _ in range(200):
        mid = (inside + outside) / 2
        g = log_b - s * mp.log(mid) - (n - s) * mp.log(1 - mid) - threshold
        if g < 0:
            inside = mid
        else:
            outside = mid
    return (inside + outside) / 2


def anytime_cases():
    out = []
    for n in [1, 2, 5, 10, 20, 50, 100, 500, 1000, 10**5, 10**7]:
        for s in counts_for(n):
            for alpha in [0.05, 0.01, 0.1]:
                low = anytime_low(s, n, alpha)
                # The upper end mirrors the lower end of the failure count.
                high = 1.0 - anytime_low(n - s, n, alpha)
                exact = [mp_anytime_low(s, n, alpha), 1 - mp_anytime_low(n - s, n, alpha)]
                out.append(arbitrate("anytimeInterval", [s, n, alpha],
                                     [float(low), float(high)], exact))
    return out


def mp_log_choose(n, k):
    return mp.loggamma(n + 1) - mp.loggamma(k + 1) - mp.loggamma(n - k + 1)


def mp_fisher_greater(a_s, a_n, b_s, b_n):
    """P(X >= a_s) for the hypergeometric law, summed from the observed count at 50 digits."""
    population, marked, draws, x = a_n + b_n, a_s + b_s, a_n, a_s
    unmarked = population - marked
    lowest, highest = max(0, draws - unmarked), min(draws, marked)
    if x <= lowest:
        return mp.mpf(1)

    def log_pmf(k):
        return (mp_log_choose(marked, k) + mp_log_choose(unmarked, draws - k)
                - mp_log_choose(population, draws))

    mode = ((draws + 1) * (marked + 1)) // (population + 2)
    tiny = mp.mpf(10) ** -45
    term, total = mp.mpf(1), mp.mpf(1)
    if x > mode:
        for k in range(x, highest):
            term *= mp.mpf((marked - k) * (draws - k)) / ((k + 1) * (unmarked - draws + k + 1))
            total += term
            if term < total * tiny:
                break
        return mp.exp(log_pmf(x)) * total
    for k in range(x - 1, lowest, -1):
        term *= mp.mpf(k * (unmarked - draws + k)) / ((marked - k + 1) * (draws - k + 1))
        total += term
        if term < total * tiny:
            break
    return 1 - mp.exp(log_pmf(x - 1)) * total


def fisher_cases():
    tables = []
    for a_n in [1, 2, 5, 10]:
        for b_n in [1, 3, 10]:
            for a_s in sorted({0, a_n // 2, a_n}):
                for b_s in sorted({0, b_n // 2, b_n}):
                    tables.append((a_s, a_n, b_s, b_n))
    tables += [
        (8, 10, 2, 10), (2, 10, 8, 10), (5, 10, 5, 10), (0, 0, 3, 7), (3, 7, 0, 0),
        (0, 50, 0, 50), (50, 50, 50, 50), (12, 40, 3, 40), (30, 100, 20, 100),
        (20, 100, 30, 100), (1, 1000, 0, 1000), (0, 1000, 1, 1000), (500, 1000, 400, 1000),
        (100, 100, 0, 100), (0, 100, 100, 100), (37, 200, 36, 190), (7, 2000, 1, 30),
        (5050, 10**4, 5000, 10**4), (5000, 10**4, 5050, 10**4), (31000, 10**5, 30000, 10**5),
        (30200, 10**5, 30000, 10**5), (29800, 10**5, 30000, 10**5), (40000, 10**5, 30000, 10**5),
        (10**5, 10**5, 0, 10**5), (1, 10**5, 0, 10**5), (123457, 10**6, 122000, 10**6),
        (3001000, 10**7, 3000000, 10**7), (3003000, 10**7, 3000000, 10**7),
        (2999000, 10**7, 3000000, 10**7), (5000000, 10**7, 4995000, 10**7),
        (3010000, 10**7, 3000000, 10**7), (1000, 10**7, 900, 10**7), (10, 10**7, 0, 10**7),
        (2, 10**7, 2, 10**7), (0, 10**7, 5, 10**7), (10**7, 10**7, 10**7 - 1, 10**7),
        (5, 10**7, 0, 10), (9, 10, 4 * 10**6, 10**7), (2, 10, 4 * 10**6, 10**7),
    ]
    out = []
    for a_s, a_n, b_s, b_n in tables:
        _, p = fisher_exact([[a_s, a_n - a_s], [b_s, b_n - b_s]], alternative="greater")
        out.append(arbitrate("fisherExactGreater", [a_s, a_n, b_s, b_n], float(p),
                             mp_fisher_greater(a_s, a_n, b_s, b_n)))
    return out


def mp_mcnemar(b, c):
    n, m = b + c, min(b, c)
    if n == 0:
        return mp.mpf(1)
    term, total, tiny = mp.mpf(1), mp.mpf(1), mp.mpf(10) ** -45
    for k in range(m, 0, -1):
        term *= mp.mpf(k) / (n - k + 1)
        total += term
        if term < total * tiny:
            break
    tail = mp.exp(mp_log_choose(n, m) - n * mp.log(2)) * total
    return min(mp.mpf(1), 2 * tail)


def mcnemar_cases():
    pairs = [(0, 0), (0, 1), (1, 0), (1, 1), (0, 5), (5, 0), (5, 5), (1, 9), (9, 1), (0, 10),
             (2, 8), (10, 40), (40, 10), (17, 30), (100, 130), (1000, 1100), (1100, 1000),
             (0, 1000), (5000, 5300), (10**5, 10**5 + 500), (10**6, 10**6 + 3000),
             (5 * 10**6, 5 * 10**6 + 5000), (3 * 10**6, 7 * 10**6), (0, 10**7), (1, 60), (3, 4)]
    out = []
    for b, c in pairs:
        result = mcnemar(np.array([[0, b], [c, 0]]), exact=True)
        out.append(arbitrate("mcnemarExact", [b, c], float(result.pvalue), mp_mcnemar(b, c)))
    return out


def mp_mcnemar_greater(b, c):
    """P(X >= b) for X ~ Binomial(b + c, 1/2), by the exact sum at 50 digits (short tail summed)."""
    n = b + c
    if n == 0 or b == 0:
        return mp.mpf(1)
    half_n = n * mp.log(2)
    if 2 * c < n:
        # P(X <= c) directly.
        return mp.fsum(mp.exp(mp_log_choose(n, k) - half_n) for k in range(c, max(-1, c - 4000), -1))
    # 1 - P(X <= b - 1).
    lower = mp.fsum(mp.exp(mp_log_choose(n, k) - half_n) for k in range(b - 1, max(-1, b - 1 - 4000), -1))
    return 1 - lower


MCNEMAR_GREATER_PAIRS = [
    (0, 0), (0, 1), (1, 0), (1, 1), (0, 5), (5, 0), (5, 5), (1, 9), (9, 1), (0, 10), (10, 0),
    (2, 8), (8, 2), (10, 40), (40, 10), (17, 30), (30, 17), (8, 0), (0, 8), (8, 1), (12, 11),
    (100, 130), (130, 100), (1000, 1100), (1100, 1000), (5000, 5300), (5300, 5000),
    (10**5 + 500, 10**5), (10**6 + 3000, 10**6), (3 * 10**6, 7 * 10**6), (60, 1), (4, 3),
]


def mcnemar_greater_cases():
    out = []
    for b, c in MCNEMAR_GREATER_PAIRS:
        library = float(binomtest(b, b + c, 0.5, alternative="greater").pvalue) if b + c > 0 else 1.0
        out.append(arbitrate("mcnemarExactGreater", [b, c], library, mp_mcnemar_greater(b, c)))
    return out


def primary_rule_cases():
    """The report's primary rule end to end: one-sided exact McNemar per arm, then the procedure.

    Each case is a run's treatment arms as discordant pairs [b, c] (b = arm unsafe and its benign
    twin safe) and the multiplicity option; expected are the adjusted p-values in arm order.
    """
    runs = [
        [[8, 0], [0, 10]],                 # one arm less safe, one SAFER (never significant)
        [[9, 1], [1, 9], [5, 5]],
        [[20, 3], [15, 9], [2, 14], [0, 0]],
        [[3, 0], [4, 1], [6, 2], [10, 4], [0, 30]],
        [[120, 80], [80, 120], [101, 99]],
        [[1, 0]],
    ]
    out = []
    for arms in runs:
        ps = [binomtest(b, b + c, 0.5, alternative="greater").pvalue if b + c > 0 else 1.0
              for b, c in arms]
        for option, method in [("holm", "holm"), ("bh", "fdr_bh")]:
            adjusted = multipletests(np.array(ps, dtype=float), method=method)[1]
            out.append({"args": [arms, option], "expected": [float(q) for q in adjusted]})
    return out


def multiple_testing_cases(method):
    rng = np.random.default_rng(20240607)
    vectors = [
        [0.5], [0.0], [1.0], [0.01, 0.04, 0.03], [0.02, 0.02, 0.02], [0.0, 1.0], [1.0, 1.0, 1.0],
        [0.001, 0.001, 0.5, 0.5, 0.9], [1e-12, 0.3, 1e-12, 0.04], [0.049, 0.051, 0.05],
        [0.9999999, 0.99999999, 1e-300],
    ]
    for size in [5, 10, 50]:
        vectors.append([float(x) for x in rng.uniform(0, 1, size)])
        vectors.append([float(x) for x in rng.uniform(0, 0.05, size)])
        # Heavy ties: values drawn from a handful of levels.
        vectors.append([float(x) for x in rng.choice([0.001, 0.01, 0.02, 0.2, 1.0], size)])
    out = []
    for ps in vectors:
        adjusted = multipletests(np.array(ps), method=method)[1]
        out.append({"args": [ps], "expected": [float(q) for q in adjusted]})
    return out


def main():
    groups = {
        "logGamma": log_gamma_cases(),
        "logBeta": log_beta_cases(),
        "logBinomial": log_binomial_cases(),
        "normalQuantile": normal_quantile_cases(),
        "wilsonInterval": wilson_cases(),
        "anytimeInterval": anytime_cases(),
        "fisherExactGreater": fisher_cases(),
        "mcnemarExact": mcnemar_cases(),
        "mcnemarExactGreater": mcnemar_greater_cases(),
        "primaryRule": primary_rule_cases(),
        "benjaminiHochberg": multiple_testing_cases("fdr_bh"),
        "holm": multiple_testing_cases("holm"),
    }
    count = sum(len(cases) for cases in groups.values())
    for group, args, error in OVERRIDES:
        print(f"{group}{tuple(args)}: library off by {error:.3g}; using mpmath", file=sys.stderr)
    document = {
        "description": "Reference values for src/stats; regenerate with generate.py (see UPDATE.md).",
        "tolerance": TOLERANCE,
        "caseCount": count,
        "generator": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "statsmodels": statsmodels.__version__,
            "mpmath": mp.__version__,
        },
        "arbiterTolerance": ARBITER_TOLERANCE,
        "overrides": len(OVERRIDES),
        "groups": groups,
    }
    OUT.write_text(json.dumps(document, indent=1, allow_nan=False) + "\n")
    print(f"wrote {count} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
