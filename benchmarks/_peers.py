"""The peer libraries' virtual environments, and running a peer's script in one (benchmarks only).

diffprivlib needs scikit-learn < 1.8, and Opacus brings torch, so the benchmarks run each in a
venv of its own, as a subprocess: the arrays go to a temporary .npz file, the script gets its
path as sys.argv[1] and prints one JSON line last on stdout.

The table-query benchmark's peers (benchmarks/_analysis_peers.py) live the same way: OpenDP's
Polars API pins its own polars (opendp 0.16.0 wants polars==1.36.1), PipelineDP brings
Google's C++ ``python-dp``, and Tumult Analytics brings pyspark and pandas 1.5; each gets a
venv of its own and runs _analysis_peers.py there as a subprocess (:func:`run_peer_file`),
one query per process, the table as a file.

Where the venvs are: one per peer, named after it (``diffprivlib``, ``opacus``, ``opendp``,
``pipeline-dp``, ``tumult``), in the folder named by the environment variable
``SKDP_BENCH_PEERS_DIR``, else in ``skdp-bench-peers`` of the user's cache folder
(``~/.cache``). Create them with::

    python benchmarks/setup_peers.py            # pip; an existing venv is kept

or point ``SKDP_BENCH_PEERS_DIR`` at a folder that already holds them. A benchmark whose
peer venv is missing leaves that peer's columns out and says so.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

PEERS_DIR_VARIABLE = "SKDP_BENCH_PEERS_DIR"

# What each peer venv holds. "torch==2.13.0" with pip's default index is the CPU build on
# Linux; an unpinned torch may fetch a CUDA build of several GB.
PEER_REQUIREMENTS = {
    "diffprivlib": ["diffprivlib==0.6.6", "scikit-learn<1.8"],
    "opacus": ["torch==2.13.0", "opacus==1.6.0", "numpy"],
}

# The table-query benchmark's peers (benchmarks/_analysis_peers.py), kept apart from the
# models' peers above so that ``setup_peers()`` (bench_suite.py --setup-peers) creates what it
# did. opendp's "polars" extra pins polars==1.36.1 and brings pyarrow (the parquet reader);
# pipeline-dp 0.3.1 needs Python 3.11-3.13 and python-dp < 2, and gets pyarrow for parquet;
# tmlt.analytics 0.21.0 needs Python < 3.13 and brings pyspark 3.5 (which needs a Java 17
# runtime on the machine) and pandas 1.5.
ANALYSIS_PEER_REQUIREMENTS = {
    "opendp": ["opendp[polars]==0.16.0"],
    "pipeline-dp": ["pipeline-dp==0.3.1", "pyarrow"],
    "tumult": ["tmlt.analytics==0.21.0", "pyarrow"],
}

# Every peer venv that setup_peers.py knows, by name.
ALL_PEER_REQUIREMENTS = {**PEER_REQUIREMENTS, **ANALYSIS_PEER_REQUIREMENTS}


def peers_dir():
    """The folder of the peer venvs: ``$SKDP_BENCH_PEERS_DIR``, else ``~/.cache/skdp-bench-peers``."""
    folder = os.environ.get(PEERS_DIR_VARIABLE)
    if folder:
        return os.path.abspath(os.path.expanduser(folder))
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "skdp-bench-peers")


def peer_python(name):
    """The interpreter of peer ``name``'s venv (it may not exist)."""
    if os.name == "nt":
        return os.path.join(peers_dir(), name, "Scripts", "python.exe")
    return os.path.join(peers_dir(), name, "bin", "python")


def setup_peers(names=None):
    """Create the peer venvs that do not exist yet, with pip; returns their interpreters.

    ``names`` are keys of :data:`ALL_PEER_REQUIREMENTS`; the default is the models' peers,
    :data:`PEER_REQUIREMENTS` (benchmarks/setup_peers.py without arguments creates them all).
    """
    pythons = {}
    for name in names or PEER_REQUIREMENTS:
        python = peer_python(name)
        root = os.path.dirname(os.path.dirname(python))
        if os.path.exists(python):
            print(f"{name}: {root} exists, kept")
        else:
            subprocess.run([sys.executable, "-m", "venv", root], check=True)
            requirements = ALL_PEER_REQUIREMENTS[name]
            subprocess.run([python, "-m", "pip", "install", "-q", *requirements], check=True)
            print(f"{name}: {root} created with {' '.join(requirements)}")
        pythons[name] = python
    return pythons


DPL_PYTHON = peer_python("diffprivlib")


def run_peer(script, arrays, *args, python=None):
    """Run ``python -c script <npz path> *args`` and return the JSON of its last stdout line.

    Parameters
    ----------
    script : str
        Python source; it reads the arrays with ``np.load(sys.argv[1])[name]``.
    arrays : dict of str to array-like
        Saved with ``np.savez`` to a temporary file, removed afterwards.
    *args : str
        Further command-line arguments (sys.argv[2:] in the script).
    python : str, optional
        Interpreter of the peer's venv; default: diffprivlib's (:func:`peer_python`).

    Returns
    -------
    The parsed JSON, or None (with a printed note) if ``python`` does not exist.

    Raises
    ------
    RuntimeError
        If the script exits with a non-zero status; the message ends with the tail of its stderr.
    """
    python = python or peer_python("diffprivlib")
    if not os.path.exists(python):
        print(f"NOTE: {python} not found (python benchmarks/setup_peers.py creates it, "
              f"or set {PEERS_DIR_VARIABLE}); this peer is skipped.")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "arrays.npz")
        np.savez(path, **arrays)
        res = subprocess.run([python, "-c", script, path, *args], capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"{python} -c <script> exited with status {res.returncode}:\n"
                           + res.stderr[-2000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def run_peer_file(path, *args, python):
    """Run ``python path *args`` and return the JSON of its last stdout line.

    The counterpart of :func:`run_peer` for a peer script kept as a file of its own
    (benchmarks/_analysis_peers.py), which takes its inputs as command-line arguments.

    Parameters
    ----------
    path : str
        The script.
    *args : str
        Its command-line arguments.
    python : str
        Interpreter of the peer's venv (:func:`peer_python`).

    Returns
    -------
    The parsed JSON, or None (with a printed note) if ``python`` does not exist.

    Raises
    ------
    RuntimeError
        If the script exits with a non-zero status; the message ends with the tail of its stderr.
    """
    if not os.path.exists(python):
        print(f"NOTE: {python} not found (python benchmarks/setup_peers.py creates it, "
              f"or set {PEERS_DIR_VARIABLE}); this peer is skipped.")
        return None
    res = subprocess.run([python, path, *args], capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"{python} {os.path.basename(path)} exited with status "
                           f"{res.returncode}:\n" + res.stderr[-2000:])
    return json.loads(res.stdout.strip().splitlines()[-1])
