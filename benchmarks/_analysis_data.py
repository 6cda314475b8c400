"""The synthetic table of the table-query benchmark, and its exact answers (benchmarks only).

One row is one record of a person (a survey answer, a monthly report): ``person`` (int64 id),
``region`` (str), ``age`` (float) and ``income`` (float, NaN where missing). The benchmark's
privacy unit is the person, who may have several rows, mostly in one region. The public
descriptors, which every contender gets and none reads off the data:

- the region keys, ``region_00`` ... (:func:`public_keys`; stored with the table by
  :func:`save_table`, so a peer's subprocess finds them);
- ``age`` lies in :data:`AGE_BOUNDS` = (18, 90) and ``income`` is clipped to
  :data:`INCOME_BOUNDS` = (0, 200000).

:func:`make_table` draws the table (numpy and pandas only); :func:`save_table` writes it as
``.npz`` (numpy only) or ``.parquet`` (pandas' writer: needs pyarrow or fastparquet);
:func:`exact_answers` gives the non-private group-by that the released values are compared with.
"""

import numpy as np
import pandas as pd

AGE_BOUNDS = (18.0, 90.0)
INCOME_BOUNDS = (0.0, 200_000.0)
COLUMNS = ("person", "region", "age", "income")
# the key under which save_table stores the public region keys (npz entry, parquet attrs)
KEYS_ENTRY = "public_region_keys"

# Shape of the draw (see make_table).
_HOME_SHARE = 0.9          # chance that a row is in its person's home region
_REGION_SKEW = 1.0         # region sizes proportional to 1 / rank**_REGION_SKEW
_MEDIAN_INCOMES = (28_000.0, 75_000.0)  # range of the regions' median incomes
_PERSON_SIGMA = 0.5        # log-income spread between the people of a region
_ROW_SIGMA = 0.15          # log-income spread between one person's rows
_MISSING_INCOME = 0.02     # share of rows whose income is NaN


def public_keys(n_regions):
    """The public key set of ``region``: ``["region_00", ..., f"region_{n_regions - 1:02d}"]``."""
    return [f"region_{k:02d}" for k in range(n_regions)]


def make_table(n_rows, n_people, n_regions, seed):
    """A synthetic table of ``n_rows`` records of ``n_people`` people in ``n_regions`` regions.

    - Regions have skewed sizes: a person's home region is drawn with probability
      proportional to ``1 / rank`` (``region_00`` the largest), so with many regions the last
      ones are small, which is what private partition selection has to cope with.
    - Every person has at least one row; the other ``n_rows - n_people`` rows go to people in
      proportion to an exponential activity weight, so most people have a few rows and some
      have many (1..k rows, k growing with ``n_rows / n_people``).
    - A row is in its person's home region with probability 0.9, else in another region
      drawn uniformly: people contribute to one region mostly, to two or more sometimes.
    - ``age`` is the person's, uniform on (18, 90), the same on all their rows.
    - ``income`` is log-normal: ``log income = log m[region of the row] + a_person + e_row``
      with ``a_person ~ N(0, 0.5²)`` and ``e_row ~ N(0, 0.15²)``; the regions' medians ``m``
      spread from 28,000 to 75,000 in a random order (unrelated to the regions' sizes). Under
      1 % of the incomes exceed the public bound 200,000 (0.65 % at 10^5 rows, 12 regions;
      left as they are: clipping them is the mechanisms' job), and 2 % of the rows have a
      missing (NaN) income.

    Parameters
    ----------
    n_rows, n_people : int
        ``1 <= n_people <= n_rows``.
    n_regions : int
        Number of region keys (the benchmark uses 4 to 50); every key is a home region with
        positive probability, but a small table may miss some.
    seed : int
        Seed of the draw: the same arguments give the same table.

    Returns
    -------
    pandas.DataFrame
        Columns ``person`` (int64), ``region`` (str), ``age`` (float64), ``income`` (float64),
        rows in random order; ``df.attrs["public_region_keys"]`` holds :func:`public_keys`.
    """
    n_rows, n_people, n_regions = int(n_rows), int(n_people), int(n_regions)
    if not 1 <= n_people <= n_rows:
        raise ValueError(f"need 1 <= n_people <= n_rows, got n_people={n_people}, n_rows={n_rows}")
    if n_regions < 2:
        raise ValueError(f"need n_regions >= 2, got {n_regions}")
    rng = np.random.default_rng(seed)
    keys = np.array(public_keys(n_regions))

    size_weights = 1.0 / np.arange(1, n_regions + 1) ** _REGION_SKEW
    home = rng.choice(n_regions, size=n_people, p=size_weights / size_weights.sum())
    activity = rng.exponential(size=n_people)
    rows_per_person = 1 + rng.multinomial(n_rows - n_people, activity / activity.sum())
    person = np.repeat(np.arange(n_people, dtype=np.int64), rows_per_person)

    region = home[person]
    away = rng.random(n_rows) >= _HOME_SHARE
    # another region than home, uniformly: shift by 1..n_regions-1
    region[away] = (region[away] + rng.integers(1, n_regions, size=away.sum())) % n_regions

    age = rng.uniform(*AGE_BOUNDS, size=n_people)[person]
    log_medians = np.log(np.geomspace(*_MEDIAN_INCOMES, num=n_regions))
    log_medians = rng.permutation(log_medians)
    person_effect = rng.normal(0.0, _PERSON_SIGMA, size=n_people)
    income = np.exp(log_medians[region] + person_effect[person]
                    + rng.normal(0.0, _ROW_SIGMA, size=n_rows))
    income[rng.random(n_rows) < _MISSING_INCOME] = np.nan

    order = rng.permutation(n_rows)
    # sample ids that do not reveal the order of the draw
    ids = rng.permutation(np.arange(10**6, 10**6 + n_people, dtype=np.int64))
    df = pd.DataFrame({
        "person": ids[person[order]],
        "region": keys[region[order]].astype(object),
        "age": age[order],
        "income": income[order],
    })
    df["region"] = df["region"].astype(str)
    df.attrs[KEYS_ENTRY] = keys.tolist()
    return df


def save_table(df, path, keys=None):
    """Write ``df`` (the columns of :func:`make_table`) to ``path``, ``.npz`` or ``.parquet``.

    The public region keys (``keys``, else ``df.attrs["public_region_keys"]``) go with it: as
    the npz entry ``public_region_keys``, or in the parquet file's pandas attrs (pandas >= 2.1
    writes ``df.attrs`` into the file's metadata). ``.npz`` needs numpy only (no pickle:
    strings are stored as a fixed-width unicode array); ``.parquet`` needs pyarrow or fastparquet.
    """
    keys = list(df.attrs.get(KEYS_ENTRY, []) if keys is None else keys)
    if not keys:
        raise ValueError("no public keys: pass keys= or use a table from make_table")
    if str(path).endswith(".npz"):
        np.savez(path, person=df["person"].to_numpy(np.int64),
                 region=df["region"].to_numpy(dtype=str),
                 age=df["age"].to_numpy(np.float64), income=df["income"].to_numpy(np.float64),
                 **{KEYS_ENTRY: np.array(keys, dtype=str)})
    elif str(path).endswith(".parquet"):
        out = df.loc[:, list(COLUMNS)].copy()
        out.attrs = {KEYS_ENTRY: keys}
        out.to_parquet(path, index=False)
    else:
        raise ValueError(f"{path}: the table is written as .npz or .parquet")
    return path


def exact_answers(df, keys=None):
    """The non-private answers per public key: ``{key: {column: value}}``.

    ``count`` is the number of rows, ``income_mean`` and ``income_median`` skip the missing
    incomes and do not clip them, ``age_mean`` is over all rows; also ``people`` (distinct
    persons with a row in the region) and ``income_mean_clipped`` (incomes clipped to
    :data:`INCOME_BOUNDS`). A key with no row gets count 0 and NaN means. These are the
    answers before contribution bounding: with ``max_rows_per_unit=1`` a DP count estimates
    something close to ``people`` rather than ``count``.
    """
    keys = list(df.attrs.get(KEYS_ENTRY, []) if keys is None else keys)
    clipped = df["income"].clip(*INCOME_BOUNDS)
    grouped = df.assign(income_clipped=clipped).groupby("region", sort=False)
    table = pd.DataFrame({
        "count": grouped.size(),
        "people": grouped["person"].nunique(),
        "income_mean": grouped["income"].mean(),
        "income_mean_clipped": grouped["income_clipped"].mean(),
        "age_mean": grouped["age"].mean(),
        "income_median": grouped["income"].median(),
    })
    table = table.reindex(keys or sorted(table.index))
    table[["count", "people"]] = table[["count", "people"]].fillna(0)
    return {str(key): {col: float(val) for col, val in row.items()}
            for key, row in table.iterrows()}
