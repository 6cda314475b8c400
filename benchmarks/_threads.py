"""One thread setting for every contender of a benchmark (benchmarks only).

A script calls :func:`set_thread_variables` before it imports numpy: it reads ``--threads N``
(default 1) from the command line and sets ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and
``MKL_NUM_THREADS`` to N, so that BLAS and OpenMP (scikit-learn's HistGradientBoosting and
KMeans) start with N threads, in the script and in the peers' subprocesses, which inherit the
environment. The script then fits inside ``threadpoolctl.threadpool_limits(N)`` as well, and
prints :func:`describe` of what the thread pools report.
"""

import os
import sys

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def set_thread_variables(threads=None, default=1):
    """Set the ``*_NUM_THREADS`` variables to ``threads``; returns it.

    ``threads=None`` takes ``--threads N`` from ``sys.argv``, else ``default``.
    """
    if threads is None:
        threads = default
        argv = sys.argv[1:]
        for i, arg in enumerate(argv):
            if arg == "--threads" and i + 1 < len(argv):
                threads = int(argv[i + 1])
            elif arg.startswith("--threads="):
                threads = int(arg.split("=", 1)[1])
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    return threads


def describe():
    """The variables and the thread count of each pool threadpoolctl finds, on one line."""
    from threadpoolctl import threadpool_info

    variables = " ".join(f"{name}={os.environ.get(name)}" for name in THREAD_VARIABLES)
    pools = ", ".join(f"{pool['internal_api']} {pool['num_threads']}"
                      for pool in threadpool_info())
    return f"{variables}; thread pools: {pools or 'none loaded'}"
