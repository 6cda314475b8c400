"""``import skdp`` stays fast: the heavy modules are imported where they are used.

Each check runs in a fresh interpreter, since this one has imported everything.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import skdp

# scipy.optimize alone took most of ``import skdp`` (about 1.9 s of it); scikit-learn
# (through privacy_cost), scipy.special and scipy.fft took most of the rest.
# psycopg: only a PostgreSQL ledger needs it (the optional `postgres` extra).
HEAVY = ["scipy.optimize", "scipy.special", "scipy.fft", "scipy.stats", "sklearn", "pandas",
         "psycopg", "dask", "distributed"]


def _modules_after(code):
    """The HEAVY modules loaded by a fresh interpreter after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    # the skdp under test, whatever the current directory holds
    path = [str(Path(skdp.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    with tempfile.TemporaryDirectory() as cwd:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             check=True, cwd=cwd, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", ["import skdp", "import skdp.accounting", "import skdp.budget"])
def test_import_loads_no_heavy_module(code):
    assert _modules_after(code) == []


def test_cli_account_loads_no_optimizer_nor_scikit_learn():
    # the RDP accountant needs scipy.special (gammaln, log_ndtr) but nothing heavier
    code = (
        "import contextlib, io\nfrom skdp.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['account', '--noise-multiplier', '4', '--sampling-rate', '0.01',"
        " '--steps', '10000', '--delta', '1e-5']) == 0"
    )
    assert _modules_after(code) == ["scipy.special"]


def test_lazy_names_resolve():
    # privacy_cost and PrivacyCost load scikit-learn on first access, and are the real objects
    code = (
        "import skdp\nfrom skdp import privacy_cost\nfrom skdp._cost import PrivacyCost\n"
        "assert skdp.PrivacyCost is PrivacyCost and skdp.privacy_cost is privacy_cost\n"
        "assert {'privacy_cost', 'PrivacyCost', 'linear_model'} <= set(dir(skdp))\n"
        "assert skdp.linear_model.DPLogisticRegression.__name__ == 'DPLogisticRegression'"
    )
    assert "sklearn" in _modules_after(code)


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        skdp.not_a_name  # noqa: B018
    assert not hasattr(skdp, "_cost_of_nothing")


def test_every_public_subpackage_is_reachable_from_skdp():
    import pkgutil

    public = {info.name for info in pkgutil.iter_modules(skdp.__path__) if not info.name.startswith("_")}
    public.discard("cli")  # the command line's module, not a subpackage
    assert public == skdp._SUBPACKAGES


def test_fits_on_arrays_load_no_dask():
    # dask is an optional extra (skdp[dask]): only a dask input imports it (skdp.utils._rows)
    code = (
        "import numpy as np\nfrom skdp.preprocessing import DPStandardScaler\n"
        "DPStandardScaler(random_state=0).fit(np.ones((50, 2)))"
    )
    assert not {"dask", "distributed"} & set(_modules_after(code))
