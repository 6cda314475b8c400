"""Plot a private group-by next to the truth: mean income by region and age group.

Writes ``docs/images/analysis_means.png``, which the user guide page
"Analysing a table" shows. The docs build does not run this script (the PNG is
committed); run it again after a change to :mod:`skdp.analysis`::

    python docs/scripts/plot_analysis.py

The table is synthetic (:func:`make_table`): 20,000 people with one to twelve
monthly rows each, in four regions and three age groups, one region much
smaller than the others (about 100 people). The query is one ``agg`` at ε = 1 with a privacy unit
(each person keeps one row), public keys and public bounds; the bars are the
released means with their 95 % noise intervals, the dots the true means of
the same (clipped) rows. The smallest groups get the widest intervals and are
flagged.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from skdp.analysis import PrivateTable  # noqa: E402

REGIONS = ["North", "South", "East", "Islands"]
AGES = ["18-34", "35-54", "55+"]


def make_table(n_people=20_000, seed=0):
    """Monthly income rows: person, region, age_group, income (a few NaN)."""
    rng = np.random.default_rng(seed)
    region = rng.choice(4, n_people, p=[0.45, 0.3, 0.245, 0.005])
    age = rng.choice(3, n_people, p=[0.3, 0.45, 0.25])
    level = 2_000 + 600 * region + 900 * age
    person_mean = rng.lognormal(np.log(level), 0.4)
    months = rng.integers(1, 13, n_people)
    person = np.repeat(np.arange(n_people), months)
    income = rng.normal(person_mean[person], 0.1 * person_mean[person])
    income[rng.random(person.size) < 0.02] = np.nan
    return pd.DataFrame({"person": person,
                         "region": np.array(REGIONS)[region[person]],
                         "age_group": np.array(AGES)[age[person]],
                         "income": income})


def main():
    df = make_table()
    bounds = {"income": (0, 20_000)}
    t = PrivateTable(df, bounds=bounds, privacy_unit="person", random_state=1)
    keys = {"region": REGIONS, "age_group": AGES}
    res = t.groupby(["region", "age_group"], keys=keys).agg(
        {"income": "mean"}, epsilon=1.0, intervals=True)
    truth = df.assign(income=df.income.clip(*bounds["income"])).groupby(
        ["region", "age_group"]).income.mean()

    fig, ax = plt.subplots(figsize=(8, 3.6))
    x = np.arange(len(res))
    err = np.vstack([res.income_mean - res.income_mean_lower,
                     res.income_mean_upper - res.income_mean])
    colours = np.where(res.too_few_rows, "#d95f02", "#1b9e77")
    ax.bar(x, res.income_mean, color=colours, alpha=0.8, label="released (ε = 1)")
    ax.errorbar(x, res.income_mean, yerr=err, fmt="none", ecolor="black", capsize=3,
                label="95 % noise interval")
    ax.plot(x, truth.reindex(res.index).to_numpy(), "o", color="#7570b3", markersize=5,
            label="true mean")
    ax.set_xticks(x, [f"{r}\n{a}" for r, a in res.index], fontsize=8)
    ax.set_ylabel("mean monthly income")
    ax.set_title("One private group-by, charged once (orange: flagged too_few_rows)")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    out = Path(__file__).resolve().parents[1] / "images" / "analysis_means.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
