"""
Private statistics of a table: Adult's numeric columns, with public bounds
==========================================================================

Run it with ``python examples/private_statistics.py``. Every statistic is a
differentially private release from :mod:`skdp.stats`, clipped to the public
bounds of :func:`skdp.datasets.adult_schema` (never read from the data), and
charged to one ``PrivacyBudget`` before it reads the column. The exact values
are printed next to them for comparison only: a real release would publish
the private column alone.
"""

import sys

import numpy as np

from skdp import PrivacyBudget, stats
from skdp.datasets import adult_schema, load_adult


def main(n_rows=None, *, epsilon=1.0, random_state=None, out=sys.stdout):
    """Release a few statistics under one budget of ``epsilon`` (pure DP, δ = 0).

    ``n_rows`` keeps that many rows drawn at random (for quick tests).
    Returns ``{"budget": ..., "releases": {name: (private, exact)}}``.
    """
    rng = np.random.default_rng(random_state)
    X, _ = load_adult(return_X_y=True)
    if n_rows is not None:
        X = X[rng.choice(len(X), size=n_rows, replace=False)]
    schema = adult_schema()
    names = schema["feature_names"]
    bounds = schema["numeric_bounds"]

    def column(name):
        return X[:, names.index(name)].astype(float)

    age, hours, education = column("age"), column("hours-per-week"), column("education-num")
    budget = PrivacyBudget(epsilon=epsilon, delta=0.0)
    share = epsilon / 5  # five releases, pure ε-DP each: they compose to at most epsilon
    common = dict(epsilon=share, budget=budget, random_state=rng)

    releases = {
        "number of rows": (stats.count(np.ones(len(X), dtype=bool), **common), len(X)),
        "mean age": (stats.mean(age, bounds=bounds["age"], **common), age.mean()),
        "median age": (stats.median(age, bounds=bounds["age"], **common), np.median(age)),
        "std of hours per week": (
            stats.std(hours, bounds=bounds["hours-per-week"], **common), hours.std()),
    }
    lo, hi = bounds["education-num"]
    hist, _ = stats.histogram(education, bins=int(hi - lo + 1), range=(lo - 0.5, hi + 0.5), **common)
    exact_hist, _ = np.histogram(education, bins=int(hi - lo + 1), range=(lo - 0.5, hi + 0.5))
    # Share of people with a bachelor's degree or more (codes 13-16): post-processing.
    releases["share with a degree (education-num >= 13)"] = (
        np.clip(hist, 0, None)[12:].sum() / np.clip(hist, 0, None).sum(),
        exact_hist[12:].sum() / exact_hist.sum(),
    )

    print(f"Adult, {len(X)} rows; each release ε = {share:g} (pure DP).", file=out)
    print(f"{'statistic':45s} {'private':>12s} {'exact (comparison only)':>25s}", file=out)
    for name, (private, exact) in releases.items():
        print(f"{name:45s} {float(private):12.3f} {float(exact):25.3f}", file=out)
    print(file=out)
    print(budget.report(), file=out)
    return {"budget": budget, "releases": releases}


if __name__ == "__main__":
    main()
