"""The same releases, bit for bit, for fixed seeds: a guard for refactoring.

A sample of :mod:`skdp.stats` functions (each noise path: Laplace, Gaussian,
the secure discrete samplers, the three quantile algorithms, histograms,
private bounds) and of estimators built on them (the forest and the boosting
too) is run with fixed seeds, and
every released float is compared with the value pinned below as an exact hex
string (:meth:`float.hex`). A change that moves code without changing what it
computes leaves them all equal; a change meant to alter a release must say so
and update the pinned values (``python tests/test_bit_for_bit.py`` prints
them as they are now).

The pins were recorded on x86-64 on the two stacks that CI runs: the newest
(numpy 2.4, scipy 1.17, scikit-learn 1.9, CPython 3.11) and the oldest that
skdp declares (numpy 1.24, scipy 1.10, scikit-learn 1.6, CPython 3.10). They
agree but for the linear regression, whose solve rounds its last bits
differently on the oldest stack's LAPACK (:data:`ON_THE_OLDEST_STACK`).
Another CPU's vector sums can round differently too.
"""

import json
import sys

import numpy as np
import pytest

from skdp import stats
from skdp.ensemble import DPHistGradientBoostingClassifier, DPRandomForestClassifier
from skdp.linear_model import DPLinearRegression
from skdp.naive_bayes import DPGaussianNB
from skdp.preprocessing import DPKBinsDiscretizer, DPStandardScaler


def _data():
    rng = np.random.default_rng(20240601)
    X = np.clip(rng.normal(0.5, 0.25, size=(400, 3)), -0.2, 1.2)
    wide = rng.uniform(0.0, 1.0, size=(300, 10))
    X_nan = X.copy()
    X_nan[rng.random(X.shape) < 0.1] = np.nan
    y_class = (X[:, 0] + X[:, 1] > 1.0).astype(int)
    y_reg = 0.5 + X @ np.array([0.3, -0.2, 0.1]) + rng.normal(0.0, 0.05, 400)
    return X, wide, X_nan, y_class, y_reg


def _releases():
    """Every pinned release, by name: a float or an array of floats."""
    X, wide, X_nan, y_class, y_reg = _data()
    x = X[:, 0]
    B = (0.0, 1.0)
    out = {
        "count": stats.count(X, epsilon=1.0, random_state=1),
        "count_axis0_gaussian": stats.count(wide, axis=0, epsilon=1.0, delta=1e-5,
                                            random_state=2),
        "sum_axis0": stats.sum(X, axis=0, epsilon=1.0, bounds=B, random_state=3),
        "mean_one_output": stats.mean(x, epsilon=1.0, bounds=B, random_state=4),
        "mean_axis0_gaussian": stats.mean(wide, axis=0, epsilon=1.0, delta=1e-5, bounds=B,
                                          random_state=5),
        "mean_secure": stats.mean(X, axis=0, epsilon=1.0, bounds=B, secure=True,
                                  random_state=6),
        "mean_secure_gaussian": stats.mean(wide, axis=0, epsilon=1.0, delta=1e-5, bounds=B,
                                           secure=True, random_state=7),
        "var_axis0": stats.var(X, axis=0, epsilon=1.0, bounds=B, random_state=8),
        "std_pooled": stats.std(X, epsilon=1.0, bounds=B, random_state=9),
        "nanmean_axis0": stats.nanmean(X_nan, axis=0, epsilon=1.0, bounds=B, random_state=10),
        "nanvar_axis0": stats.nanvar(X_nan, axis=0, epsilon=1.0, bounds=B, random_state=11),
        "quantile_split": stats.quantile(X, [0.1, 0.5, 0.9], axis=0, epsilon=1.0, bounds=B,
                                         random_state=12),
        "quantile_joint": stats.quantile(X, [0.1, 0.5, 0.9], axis=0, epsilon=1.0, bounds=B,
                                         method="joint", random_state=13),
        "quantile_secure": stats.quantile(X, [0.25, 0.75], axis=0, epsilon=1.0, bounds=B,
                                          secure=True, random_state=14),
        "nanquantile": stats.nanquantile(X_nan, 0.5, axis=0, epsilon=1.0, bounds=B,
                                         random_state=15),
        "histogram": stats.histogram(x, bins=8, range=B, epsilon=1.0, random_state=16)[0],
        "histogram_secure": stats.histogram(x, bins=8, range=B, epsilon=1.0, secure=True,
                                            random_state=17)[0],
        "histogramdd": stats.histogramdd(X[:, :2], bins=4, range=[B, B], epsilon=1.0,
                                         delta=1e-5, random_state=18)[0],
    }
    lower, upper = stats.bounds(X, epsilon=1.0, random_state=19)
    out["bounds"] = np.concatenate([lower, upper])

    scaler = DPStandardScaler(bounds=B, epsilon=1.0, random_state=20).fit(X)
    out["DPStandardScaler"] = np.concatenate([scaler.mean_, scaler.var_])
    scaler = DPStandardScaler(epsilon=1.0, random_state=21).fit(X)  # private bounds
    out["DPStandardScaler_no_bounds"] = np.concatenate([scaler.mean_, scaler.var_])
    scaler = DPStandardScaler(bounds=B, epsilon=1.0, secure=True, random_state=22).fit(X)
    out["DPStandardScaler_secure"] = np.concatenate([scaler.mean_, scaler.var_])
    nb = DPGaussianNB(bounds=B, classes=[0, 1], epsilon=1.0, random_state=23).fit(X, y_class)
    out["DPGaussianNB"] = np.concatenate([nb.theta_.ravel(), nb.var_.ravel(), nb.class_prior_])
    reg = DPLinearRegression(bounds_X=B, bounds_y=(0.0, 1.5), epsilon=1.0,
                             random_state=24).fit(X, y_reg)
    out["DPLinearRegression"] = np.concatenate([reg.coef_, [reg.intercept_]])
    # 400 rows at ε = 5: the count outweighs 400 σ, the 128 steps of the long schedule
    reg = DPLinearRegression(bounds_X=B, bounds_y=(0.0, 1.5), epsilon=5.0,
                             random_state=27).fit(X, y_reg)
    out["DPLinearRegression_long_schedule"] = np.concatenate([reg.coef_, [reg.intercept_]])
    kbins = DPKBinsDiscretizer(n_bins=4, strategy="quantile", bounds=B, epsilon=1.0,
                               random_state=25).fit(X)
    out["DPKBinsDiscretizer_quantile"] = np.concatenate(kbins.bin_edges_)
    kbins = DPKBinsDiscretizer(n_bins=4, epsilon=1.0, random_state=26).fit(X)  # private bounds
    out["DPKBinsDiscretizer_no_bounds"] = np.concatenate(kbins.bin_edges_)
    # the trees' histograms (dense or sparse sums, the same arithmetic), noisy leaves
    forest = DPRandomForestClassifier(n_estimators=5, bounds=B, classes=[0, 1], epsilon=1.0,
                                      random_state=27).fit(X, y_class)
    out["DPRandomForestClassifier"] = forest.predict_proba(X[:5])[:, 1]
    boosting = DPHistGradientBoostingClassifier(max_iter=5, bounds=B, classes=[0, 1],
                                                epsilon=1.0, random_state=28).fit(X_nan, y_class)
    out["DPHistGradientBoostingClassifier"] = boosting.predict_proba(X_nan[:5])[:, 1]
    return out


def _hex(value):
    return [float(v).hex() for v in np.ravel(np.asarray(value, dtype=float))]


EXPECTED = {
    "DPHistGradientBoostingClassifier": [
        "0x1.ad69c7c3eb111p-1", "0x1.b56d7f1539661p-2", "0x1.b6059d8880795p-1",
        "0x1.ba2762296dfd4p-1", "0x1.eb04579f9d7ebp-2",
    ],
    "DPRandomForestClassifier": [
        "0x1.b988a91ccfaadp-1", "0x1.409b42d6e4a13p-2", "0x1.5cffcb2971a40p-1",
        "0x1.62ac9a2d60b58p-1", "0x1.b4617594a1140p-4",
    ],
    "DPGaussianNB": [
        "0x1.71882f402a04dp-2", "0x1.5c517374c966fp-2", "0x1.d60d7e76713c1p-2",
        "0x1.3cd553acba3d8p-1", "0x1.49806e6b55b28p-1", "0x1.fb005a93d62dap-2",
        "0x1.574fd8683279cp-5", "0x1.58311e97eabcep-5", "0x1.9bc38b668257fp-5",
        "0x1.1cf48256983efp-5", "0x1.8970eea5858d9p-6", "0x1.ff5a1e1fc996ap-5",
        "0x1.cb85ebd24ab35p-2", "0x1.1a3d0a16daa65p-1",
    ],
    "DPKBinsDiscretizer_no_bounds": [
        "0x1.0000000000000p-3", "0x1.6000000000000p-2", "0x1.2000000000000p-1",
        "0x1.9000000000000p-1", "0x1.0000000000000p+0", "0x1.0000000000000p-3",
        "0x1.6000000000000p-2", "0x1.2000000000000p-1", "0x1.9000000000000p-1",
        "0x1.0000000000000p+0", "0x1.0000000000000p-3", "0x1.6000000000000p-2",
        "0x1.2000000000000p-1", "0x1.9000000000000p-1", "0x1.0000000000000p+0",
    ],
    "DPKBinsDiscretizer_quantile": [
        "0x0.0p+0", "0x1.0c35357e70fb3p-2", "0x1.e7d71a828acd2p-2",
        "0x1.04fb0c54deb14p-1", "0x1.0000000000000p+0", "0x0.0p+0",
        "0x1.e5a9d9b962b74p-2", "0x1.f750af58b9145p-2", "0x1.72c2f7e23f6d3p-1",
        "0x1.0000000000000p+0", "0x0.0p+0", "0x1.31453f1f85835p-2",
        "0x1.e2fbdee090da7p-2", "0x1.5dd8db99b92f2p-1", "0x1.0000000000000p+0",
    ],
    # the ridge shrinks the intercept towards the noisy mean, and is a quarter of AdaSSP's
    # where the count outweighs its noise bound; eight refinement steps follow the solve,
    # the Gram matrix taking 0.3 of 1/σ² (issue 26)
    "DPLinearRegression": [
        "0x1.9cb3e7a69e309p-3", "-0x1.bcc725304320dp-3", "0x1.aa73297e8cfa2p-5",
        "0x1.2b1e0d77e47e3p-1",
    ],
    "DPLinearRegression_long_schedule": [
        "0x1.37172e0935525p-2", "-0x1.ba9b99333573cp-3", "0x1.8a3a95b81dd06p-4",
        "0x1.04f09c0ff20d0p-1",
    ],
    "DPStandardScaler": [
        "0x1.fa447d4af0c42p-2", "0x1.03d4892a49d9ap-1", "0x1.f9d5c066af3a9p-2",
        "0x1.b794a68e99811p-5", "0x1.aadc37322942cp-5", "0x1.cb1fa057ec4dap-5",
    ],
    "DPStandardScaler_no_bounds": [
        "0x1.04f1579b3eceep-1", "0x1.3192d8d017161p-1", "0x1.04f2a4831490ap-1",
        "0x1.5bdda0de678f0p-5", "0x1.909d27af6183ep-5", "0x1.3b681990a93c7p-5",
    ],
    "DPStandardScaler_secure": [
        "0x1.f6c930cb32217p-2", "0x1.113d28c5d93b8p-1", "0x1.e98659910b5cfp-2",
        "0x1.a88250cd5fb28p-5", "0x1.b1d4a3d781301p-5", "0x1.b4ad7b019289cp-5",
    ],
    "bounds": [
        "0x1.0000000000000p-3", "0x1.0000000000000p-3", "0x1.0000000000000p-3",
        "0x1.0000000000000p+0", "0x1.0000000000000p+0", "0x1.0000000000000p+0",
    ],
    "count": [
        "0x1.2c0498124eb9cp+10",
    ],
    "count_axis0_gaussian": [
        "0x1.2e6b222e27590p+8", "0x1.25500b403b916p+8", "0x1.26b740a5afba9p+8",
        "0x1.0cc467a9c45adp+8", "0x1.4305e2ece5f02p+8", "0x1.3aa30b664eed9p+8",
        "0x1.27d644ae1ccbfp+8", "0x1.35e6265a900cbp+8", "0x1.2f98f0d0bc376p+8",
        "0x1.24ea472a17ee8p+8",
    ],
    "histogram": [
        "0x1.424c81a641fb3p+4", "0x1.6ecea7e6f4219p+5", "0x1.92a2c2161b991p+5",
        "0x1.2e8d217580addp+6", "0x1.491d190f1fdaap+6", "0x1.07714893ceea4p+6",
        "0x1.b6223baf40364p+4", "0x1.43b39266ce67bp+4",
    ],
    "histogram_secure": [
        "0x1.4000000000000p+4", "0x1.7000000000000p+5", "0x1.9800000000000p+5",
        "0x1.2c00000000000p+6", "0x1.4c00000000000p+6", "0x1.0400000000000p+6",
        "0x1.a000000000000p+4", "0x1.4000000000000p+4",
    ],
    "histogramdd": [
        "0x1.f19b8e3f94a82p+2", "0x1.39214a60d2880p+4", "0x1.46c517029a49ep+4",
        "0x1.666de09ae8abfp+3", "0x1.2ce4a04bb5362p+4", "0x1.4118297927e2ap+5",
        "0x1.62b981ab01658p+5", "0x1.72abc0fd82dd5p+4", "0x1.7e620742ffc44p+3",
        "0x1.7cbddad2bf9f6p+5", "0x1.e4449a817c343p+5", "0x1.4a3b2f4987874p+4",
        "0x1.55f55ad073cb0p+3", "0x1.08062302a99d1p+4", "0x1.5450182c47bd1p+4",
        "-0x1.f59bd5c1c20bcp-1",
    ],
    "mean_axis0_gaussian": [
        "0x1.d88e7faa11165p-2", "0x1.0c3574fc9bd53p-1", "0x1.133058b5c4968p-1",
        "0x1.1588165524c00p-1", "0x1.0b4b4dd4a082ap-1", "0x1.047d7991857dbp-1",
        "0x1.009f266bccf67p-1", "0x1.07029d6d1ad79p-1", "0x1.09b87d5bc3205p-1",
        "0x1.f2e09ea1b89a9p-2",
    ],
    "mean_one_output": [
        "0x1.fb29646761c4dp-2",
    ],
    "mean_secure": [
        "0x1.fafcdae3b2014p-2", "0x1.0b71b0bf36b8fp-1", "0x1.fcd1745d1745dp-2",
    ],
    "mean_secure_gaussian": [
        "0x1.ed62c733dbc80p-2", "0x1.12cc8d94fd87dp-1", "0x1.1b834ae820ed1p-1",
        "0x1.fac2437f96a30p-2", "0x1.0ce991b29fb10p-1", "0x1.186121bfcb518p-1",
        "0x1.0ed3f61f479d4p-1", "0x1.096bd5323653fp-1", "0x1.04cfd87d1e74ep-1",
        "0x1.e9cbbadaf54c9p-2",
    ],
    "nanmean_axis0": [
        "0x1.f650e701c7741p-2", "0x1.0e413fe33a73dp-1", "0x1.f1d95a289f6bbp-2",
    ],
    "nanquantile": [
        "0x1.07a9b18408dd4p-1", "0x1.10d40c631b9e0p-1", "0x1.06d69de8901b9p-1",
    ],
    "nanvar_axis0": [
        "0x1.75a98402dad13p-5", "0x1.baa4fd4364954p-5", "0x1.1536f42ab0c33p-4",
    ],
    "quantile_joint": [
        "0x1.d06d4b0176217p-3", "0x1.a7db5e6a5ef01p-3", "0x1.2d574f7810739p-3",
        "0x1.121519541f2b8p-1", "0x1.eacf89039aecbp-2", "0x1.f76836052c521p-2",
        "0x1.c04bc4ebf7bbap-1", "0x1.adde0999fdbdap-1", "0x1.918003ad6ecb8p-1",
    ],
    "quantile_secure": [
        "0x1.4d5354d5354d5p-2", "0x1.6459164591646p-2", "0x1.1946519465194p-2",
        "0x1.6659966599666p-1", "0x1.66d9b66d9b66ep-1", "0x1.5c5715c5715c5p-1",
    ],
    "quantile_split": [
        "0x1.06aef59db2942p-3", "0x1.a93b822d599dep-3", "0x1.ac03b3a643778p-5",
        "0x1.dffb8bbcc86b8p-2", "0x1.25625340ca4e8p-1", "0x1.012e653a6b057p-1",
        "0x1.8f1d460606e61p-1", "0x1.4edaf0f7d1374p-1", "0x1.a45fc1bea5a67p-1",
    ],
    "std_pooled": [
        "0x1.eea3a7dfb8429p-3",
    ],
    "sum_axis0": [
        "0x1.818c0dcfd8d18p+7", "0x1.9b5484342fd8bp+7", "0x1.9071d2b16ee60p+7",
    ],
    "var_axis0": [
        "0x1.cf2a3ee9de957p-5", "0x1.c981de2c50ff2p-5", "0x1.e7ccbf6f92d36p-5",
    ],
}


# The same release on the oldest stack, where another LAPACK rounds the solve's last bits.
ON_THE_OLDEST_STACK = {
    "DPLinearRegression": [
        "0x1.9cb3e7a69e308p-3", "-0x1.bcc725304320dp-3", "0x1.aa73297e8cf97p-5",
        "0x1.2b1e0d77e47e4p-1",
    ],
}


@pytest.fixture
def releases(monkeypatch):
    from _testing import seeded_secure

    seeded_secure(monkeypatch)  # the secure releases read seeded bytes
    return _releases()


def test_every_release_is_pinned(releases):
    assert sorted(releases) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_release_is_bit_for_bit_the_same(releases, name):
    pinned = [EXPECTED[name]] + ([ON_THE_OLDEST_STACK[name]] if name in ON_THE_OLDEST_STACK else [])
    assert _hex(releases[name]) in pinned


if __name__ == "__main__":  # print the pins as the code computes them now
    from _testing import seeded_secure

    patch = pytest.MonkeyPatch()
    seeded_secure(patch)
    try:
        for key, value in sorted(_releases().items()):
            sys.stdout.write(f"    {json.dumps(key)}: {json.dumps(_hex(value))},\n")
    finally:
        patch.undo()
