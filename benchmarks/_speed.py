"""Side-by-side timing for the ``--speed`` options of bench_kmeans.py and bench_decomposition.py.

Each round runs every contender once, in turn, so that a change of the machine's load hits
all of them alike; a contender's ratio to the reference is the median over the rounds of its
time over the reference's time in the same round. With one thread the process's CPU seconds
are given too (a loaded machine moves them less than the wall time). Peak memory is what ``tracemalloc`` saw
allocated during one fit (numpy reports its buffers to it), as a multiple of X's size.
"""

import os
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits


def interleaved(contenders, rounds):
    """{name: [wall seconds of each round]} and the same in the process's CPU seconds.

    Every contender runs once per round, in turn.
    """
    wall = {name: [] for name in contenders}
    cpu = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fit in contenders.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fit()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return wall, cpu


def peak_memory(fit):
    """The peak of the memory allocated during ``fit()`` (bytes), by tracemalloc."""
    tracemalloc.start()
    try:
        fit()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def speed_table(shapes, make, reference, rounds, thread_counts):
    """Print one row per shape and thread count: seconds (median) and ratios to ``reference``.

    ``make(n, d)`` returns (X, {name: fit}); the fits of one shape share X.
    """
    print(f"load average at start {os.getloadavg()[0]:.2f}; {rounds} interleaved rounds")
    header = None
    for n, d in shapes:
        X, contenders = make(n, d)
        names = list(contenders)
        if header is None:
            header = ("| rows x cols | threads | " + " | ".join(f"{m} (s)" for m in names)
                      + " | " + " | ".join(f"{m} / {reference}" for m in names
                                           if m != reference) + " |")
            print(header)
            print("|---|---|" + "---|" * (2 * len(names) - 1))
        for threads in thread_counts:
            with threadpool_limits(threads):
                wall, cpu = interleaved(contenders, rounds)
            rows = [("", wall)] + ([(" (CPU s)", cpu)] if threads == 1 else [])
            for what, times in rows:  # one thread: the CPU seconds too, which load moves less
                ref = np.array(times[reference])
                cells = [f"{np.median(times[m]):.3f}" for m in names]
                ratios = [f"{np.median(np.array(times[m]) / ref):.2f}" for m in names
                          if m != reference]
                print(f"| {n} x {d} | {threads}{what} | " + " | ".join(cells + ratios) + " |",
                      flush=True)
        with threadpool_limits(1):
            peaks = {m: peak_memory(fit) / X.nbytes for m, fit in contenders.items()}
        print(f"  peak memory during a fit / X's size ({X.nbytes / 1e6:.0f} MB), one thread: "
              + ", ".join(f"{m} {p:.2f}" for m, p in peaks.items()), flush=True)
        del X, contenders
    print(f"load average at end {os.getloadavg()[0]:.2f}")
