"""A dask X beside an in-memory y of another length: the usual error, before any charge."""

import numpy as np
import pytest

from skdp import PrivacyBudget
from skdp.linear_model import DPLinearRegression
from skdp.naive_bayes import DPGaussianNB

da = pytest.importorskip("dask.array")


@pytest.mark.parametrize("y", [np.zeros(299), np.zeros(301), np.zeros((299, 1)), np.float64(1.0)],
                         ids=["short", "long", "column", "scalar"])
def test_an_in_memory_target_of_another_length_is_refused_before_the_charge(y):
    X = da.from_array(np.random.default_rng(0).uniform(0, 1, (300, 3)), chunks=100)
    budget = PrivacyBudget(10.0, 1e-5)
    for estimator in (DPLinearRegression(budget=budget, bounds_X=(0, 1), bounds_y=(0, 1)),
                      DPGaussianNB(budget=budget, classes=[0, 1], bounds=(0, 1))):
        with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[300, "):
            estimator.fit(X, y)
    assert len(budget) == 0
