"""Review of the trees' and the forest's exponential mechanism by inverse CDF (tree/_choice.py).

Checked and sound (these tests pass and guard it):

- ``exponential_choice`` is the inverse CDF of w_j / Σ w: on a grid of 2^16
  uniforms every candidate is drawn for K·p_j ± 1 of them (exact, no
  sampling error), for weights spread over 700 nats, equal weights, offsets
  up to ±1e6 and −∞ anywhere; it never returns an index out of range or a
  candidate of weight 0, even at u = 0, at u just below 1 and at the
  cumulative weights' own ratios, and it warns nothing on these inputs.
- In a fitted tree, the log weights at the root on neighbouring datasets
  (one row added, with a NaN or a category) differ by at most ε_s/2, i.e. a
  score sensitivity of 1 in ln w = ε_s·u/(2Δ), and numeric candidates reach
  it; the categorical features' pair weights also move by at most ε_s/2.
- The number of draws from the fit's generator does not depend on the data:
  a Generator given as ``random_state`` ends a tree's or a forest's fit in
  the same state on neighbouring datasets and on unrelated ones of the same
  shape (public bounds, private bounds, categorical features, NaN).
"""

import math
import warnings

import numpy as np
import pytest

from skdp.ensemble import DPRandomForestClassifier
from skdp.tree import DPDecisionTreeClassifier
from skdp.tree import _classes
from skdp.tree._choice import exponential_choice

K = 2**16
LOG_WEIGHTS = [
    [0.0, math.log(2.0), -np.inf, math.log(5.0), -1.3],
    [-np.inf, -np.inf, 3.0, -np.inf],  # one drawable candidate
    [1e6, 1e6 - 0.5, -np.inf, 1e6 + 2.0, 1e6 - 700.0],  # large offset, a weight near e^-700
    [-1e6, -1e6 + 1.0, -1e6 - 3.0, -np.inf],
    [7.0] * 9,  # equal weights
    [-np.inf, 0.0, 0.0, -np.inf, -np.inf, 0.0, -np.inf],
]


@pytest.mark.parametrize("log_w", LOG_WEIGHTS)
def test_each_candidate_gets_its_share_of_a_grid_of_uniforms(log_w):
    """For u = k/K, k = 0..K−1, candidate j is drawn K·p_j ± 1 times: the exact inverse CDF."""
    log_w = np.asarray(log_w)
    u = np.arange(K) / K
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drawn = exponential_choice(np.tile(log_w, (K, 1)), u)
    counts = np.bincount(drawn, minlength=log_w.size)
    assert counts.size == log_w.size  # no index out of range
    p = np.exp(log_w - log_w.max())
    p /= p.sum()
    assert np.all(np.abs(counts - K * p) <= 1.0 + 1e-9 * K)
    assert not counts[np.isneginf(log_w)].any()
    assert np.all(np.diff(drawn) >= 0)  # monotone in u: an inverse CDF


def test_weight_zero_is_never_drawn_at_the_edges():
    """At u = 0, u = 1 − 2^-53 and u equal to each cumulative share (rounded either way),
    over random rows with −∞ entries and random finite log weights."""
    rng = np.random.default_rng(0)
    n, m = 2000, 12
    log_w = rng.normal(0, 30, (n, m))
    log_w[rng.random((n, m)) < 0.4] = -np.inf
    log_w[np.arange(n), rng.integers(0, m, n)] = rng.normal(0, 30, n)  # one finite per row
    w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
    share = np.cumsum(w, axis=1) / w.sum(axis=1, keepdims=True)
    below_one = 1.0 - 2.0**-53
    cols = [np.zeros(n), np.full(n, below_one)]
    for j in range(m):
        s = np.minimum(share[:, j], below_one)
        cols += [s, np.nextafter(s, 0.0), np.minimum(np.nextafter(s, 1.0), below_one)]
    for u in cols:
        drawn = exponential_choice(log_w, u)
        assert drawn.min() >= 0 and drawn.max() < m
        assert np.all(np.isfinite(log_w[np.arange(n), drawn]))


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random((n, 3)), rng.integers(0, 4, n)]).astype(float)
    X[rng.random(n) < 0.05, 1] = np.nan
    y = np.where(rng.random(n) < 0.5, 0, rng.integers(1, 3, n))  # class 0 the majority
    return X, y


TREE = dict(epsilon=2.0, bounds=(0, 1), classes=[0, 1, 2], categorical_features=[3],
            categories=[[0, 1, 2, 3]], max_depth=1, max_bins=8)


@pytest.fixture
def choices(monkeypatch):
    """The log weights of every call of exponential_choice made by the trees."""
    calls = []

    def spy(log_weights, uniform):
        calls.append(np.array(log_weights, dtype=float))
        return exponential_choice(log_weights, uniform)

    monkeypatch.setattr(_classes, "exponential_choice", spy)
    return calls


@pytest.mark.parametrize("row", [[0.5, 0.2, 0.9, 1.0, 0], [0.0, np.nan, 1.0, 3.0, 0],
                                 [1.0, 1.0, 0.0, 0.0, 0], [0.3, 0.7, 0.1, 2.0, 2]])
def test_root_log_weights_move_by_at_most_half_the_split_epsilon(choices, row):
    X, y = _data()
    X1, y1 = np.vstack([X, row[:4]]), np.append(y, row[4])
    a = DPDecisionTreeClassifier(random_state=1, **TREE).fit(X, y)
    n_calls = len(choices)
    b = DPDecisionTreeClassifier(random_state=1, **TREE).fit(X1, y1)
    assert len(choices) == 2 * n_calls == 4  # the category pairs, then the root's choice
    h = a.split_epsilon_ / 2
    assert b.split_epsilon_ == a.split_epsilon_
    for old, new in zip(choices[:n_calls], choices[n_calls:]):
        assert np.array_equal(np.isfinite(old), np.isfinite(new))
        finite = np.isfinite(old)
        assert np.abs(new[finite] - old[finite]).max() <= h * (1 + 1e-9)
    root_old, root_new = choices[1], choices[3]
    numeric = np.isfinite(root_old).sum() - 1  # every numeric candidate, and the category's
    assert numeric == 3 * (2 * 8 - 1)
    if row[4] == 0:  # a row of the majority class raises some candidate's score by 1
        finite = np.isfinite(root_old)
        assert np.abs(root_new[finite] - root_old[finite]).max() >= h * (1 - 1e-9)


def _neighbours():
    X, y = _data()
    rng = np.random.default_rng(3)
    other = np.column_stack([rng.random((401, 3)) ** 3, rng.integers(0, 4, 401)])
    return [(np.vstack([X, X[:1]]), np.append(y, y[0])),
            (np.vstack([X, [[0.0, np.nan, 1.0, 3.0]]]), np.append(y, 2)),
            (np.vstack([X, [[1.0, 0.0, 0.5, 0.0]]]), np.append(y, 1)),
            (other, rng.integers(0, 3, 401))]


@pytest.mark.parametrize("make", [
    lambda rng: DPDecisionTreeClassifier(random_state=rng, **dict(TREE, max_depth=3)),
    lambda rng: DPDecisionTreeClassifier(random_state=rng, **dict(TREE, bounds=None)),
    lambda rng: DPRandomForestClassifier(1, random_state=rng, **dict(TREE, max_depth=3)),
    lambda rng: DPRandomForestClassifier(1, random_state=rng, **dict(
        TREE, bounds=None, categorical_features=None, categories=None, max_features=2)),
    lambda rng: DPRandomForestClassifier(3, random_state=rng, **dict(TREE, max_depth=3)),
], ids=["tree", "tree, private bounds", "forest of one", "forest of one, private bounds",
        "forest"])
def test_the_number_of_draws_does_not_depend_on_the_data(make):
    """A forest of one tree grows it from the fit's generator itself (with features drawn
    per node); a forest of several seeds one generator per tree from it."""
    states = []
    for X, y in _neighbours():
        rng = np.random.default_rng(5)
        make(rng).fit(X, y)
        states.append(rng.bit_generator.state)
    assert all(s == states[0] for s in states)
    assert np.random.default_rng(5).bit_generator.state != states[0]  # the fit drew from it
