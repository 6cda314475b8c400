"""DPKMeans warns, before the charge and from the shapes alone, when n_clusters exceeds the rows."""

import warnings

import numpy as np
import pytest

from skdp import BudgetExceededError, PrivacyBudget
from skdp.cluster import DPKMeans

X = np.random.default_rng(0).uniform(0, 1, size=(50, 2))


def test_more_clusters_than_rows_warns_before_the_charge():
    budget = PrivacyBudget(0.5, 1e-5)  # too small: the fit is refused at the charge
    with pytest.warns(UserWarning, match=r"n_clusters=80 is more than the 50 rows") as record, \
            pytest.raises(BudgetExceededError):
        DPKMeans(n_clusters=80, bounds=(0, 1), budget=budget, random_state=0).fit(X)
    assert len(budget) == 0
    # the message depends on the shapes only
    other = np.random.default_rng(1).normal(size=(50, 2))
    with pytest.warns(UserWarning) as again:
        DPKMeans(n_clusters=80, bounds=(0, 1), random_state=0).fit(other)
    assert [str(w.message) for w in again if "n_clusters" in str(w.message)] == \
        [str(w.message) for w in record if "n_clusters" in str(w.message)]


def test_no_warning_when_the_clusters_fit_in_the_rows():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPKMeans(n_clusters=50, bounds=(0, 1), random_state=0).fit(X)
