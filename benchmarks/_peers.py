"""Run a peer library's script in its own venv on arrays from this process (benchmarks only).

diffprivlib needs scikit-learn < 1.8, so the benchmarks run it in /work/dplvenv as a
subprocess: the arrays go to a temporary .npz file, the script gets its path as sys.argv[1]
and prints one JSON line last on stdout.
"""

import json
import os
import subprocess
import tempfile

import numpy as np

DPL_PYTHON = "/work/dplvenv/bin/python"


def run_peer(script, arrays, *args, python=DPL_PYTHON):
    """Run ``python -c script <npz path> *args`` and return the JSON of its last stdout line.

    Parameters
    ----------
    script : str
        Python source; it reads the arrays with ``np.load(sys.argv[1])[name]``.
    arrays : dict of str to array-like
        Saved with ``np.savez`` to a temporary file, removed afterwards.
    *args : str
        Further command-line arguments (sys.argv[2:] in the script).
    python : str
        Interpreter of the peer's venv.

    Returns
    -------
    The parsed JSON, or None (with a printed note) if ``python`` does not exist.

    Raises
    ------
    RuntimeError
        If the script exits with a non-zero status; the message ends with the tail of its stderr.
    """
    if not os.path.exists(python):
        print(f"NOTE: {python} not found; diffprivlib skipped.")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "arrays.npz")
        np.savez(path, **arrays)
        res = subprocess.run([python, "-c", script, path, *args], capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"{python} -c <script> exited with status {res.returncode}:\n"
                           + res.stderr[-2000:])
    return json.loads(res.stdout.strip().splitlines()[-1])
