"""Speed of skdp's DP-SGD engine, side by side with scikit-learn and Opacus.

1. Per epoch on UCI Adult (32,561 rows, 105 features from skdp's public-schema
   preprocessing), expected batch 256:
   - ``DPSGDClassifier(hidden_layer_sizes=(64, 64))`` vs scikit-learn's
     non-private ``MLPClassifier`` of the same shape (target <= 2x) and vs
     Opacus on the same model on CPU (target >= 10x faster);
   - linear ``DPSGDClassifier`` vs ``SGDClassifier(loss="log_loss")`` (target <= 3x).
   skdp runs with a given ``noise_multiplier`` (1.0) so the timing is the
   training loop; the one-off noise calibration for a target ε is timed
   separately. Each library is timed over several epochs, repeated, and the
   best repeat is kept (the machine is shared).
2. Scaling on synthetic data (n = 1e4, 1e5, 1e6; 20 features): fit time per
   epoch, and the tracemalloc peak of a fit compared with the size of the data.

Run::

    python benchmarks/bench_dpsgd.py

Opacus runs in a subprocess of its peer venv (torch 2.13.0 CPU, opacus; see
benchmarks/_peers.py: ``python benchmarks/setup_peers.py opacus``) if that venv exists.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.neural_network import MLPClassifier

from skdp.accounting import calibrate_noise_multiplier
from skdp.datasets import adult_preprocessor, load_adult
from skdp.linear_model import DPSGDClassifier

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _peers import peer_python  # noqa: E402

BENCHVENV_PYTHON = peer_python("opacus")

OPACUS_SCRIPT = textwrap.dedent(
    """
    import sys, time, warnings
    import numpy as np, torch, opacus
    from torch import nn
    from opacus import PrivacyEngine
    warnings.filterwarnings("ignore")
    X = torch.tensor(np.load(sys.argv[1]), dtype=torch.float32)
    y = torch.tensor(np.load(sys.argv[2]), dtype=torch.float32)[:, None]
    epochs, repeats = int(sys.argv[3]), int(sys.argv[4])
    torch.manual_seed(0)
    best = float("inf")
    for _ in range(repeats):
        model = nn.Sequential(nn.Linear(X.shape[1], 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                              nn.Linear(64, 1))
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=256)
        model, opt, loader = PrivacyEngine().make_private(
            module=model, optimizer=opt, data_loader=loader, noise_multiplier=1.0,
            max_grad_norm=1.0, poisson_sampling=True)
        loss_fn = nn.BCEWithLogitsLoss()
        t = time.perf_counter()
        for _ in range(epochs):
            for xb, yb in loader:
                if len(xb) == 0:
                    continue
                opt.zero_grad()
                loss_fn(model(xb), yb).backward()
                opt.step()
        best = min(best, (time.perf_counter() - t) / epochs)
    print(best, torch.__version__, opacus.__version__, torch.get_num_threads())
    """
)


def best_seconds_per_epoch(make, X, y, epochs, repeats):
    best = float("inf")
    for _ in range(repeats):
        est = make(epochs)
        t = time.perf_counter()
        est.fit(X, y)
        best = min(best, (time.perf_counter() - t) / epochs)
    return best


def adult():
    X, y = load_adult(return_X_y=True)
    X = adult_preprocessor().fit_transform(X)
    return np.ascontiguousarray(X, dtype=np.float64), np.asarray(y)


def opacus_seconds_per_epoch(X, y, epochs, repeats):
    if not os.path.exists(BENCHVENV_PYTHON):
        return None, f"no {BENCHVENV_PYTHON} (python benchmarks/setup_peers.py opacus)"
    with tempfile.TemporaryDirectory() as tmp:
        xp, yp = os.path.join(tmp, "X.npy"), os.path.join(tmp, "y.npy")
        np.save(xp, X.astype(np.float32))
        np.save(yp, y.astype(np.float32))
        out = subprocess.run(
            [BENCHVENV_PYTHON, "-c", OPACUS_SCRIPT, xp, yp, str(epochs), str(repeats)],
            capture_output=True, text=True, check=True,
        )
    seconds, torch_version, opacus_version, threads = out.stdout.split()
    return float(seconds), f"opacus {opacus_version}, torch {torch_version}, {threads} threads"


def bench_adult(epochs, repeats, opacus_epochs):
    X, y = adult()
    n = X.shape[0]
    print(f"## Adult: {n} rows, {X.shape[1]} features, batch 256, best of {repeats} repeats\n")
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    rows = []
    for _ in range(1):
        neural = best_seconds_per_epoch(
            lambda e: DPSGDClassifier(hidden_layer_sizes=(64, 64), noise_multiplier=1.0,
                                      epsilon=None, batch_size=256, max_iter=e, classes=[0, 1],
                                      random_state=0),
            X, y, epochs, repeats)
        mlp = best_seconds_per_epoch(
            lambda e: MLPClassifier(hidden_layer_sizes=(64, 64), batch_size=256, max_iter=e,
                                    tol=0.0, n_iter_no_change=e + 1, random_state=0),
            X, y, epochs, repeats)
        linear = best_seconds_per_epoch(
            lambda e: DPSGDClassifier(noise_multiplier=1.0, epsilon=None, batch_size=256,
                                      max_iter=e, classes=[0, 1], random_state=0),
            X, y, epochs, repeats)
        sgd = best_seconds_per_epoch(
            lambda e: SGDClassifier(loss="log_loss", max_iter=e, tol=None, random_state=0),
            X, y, epochs, repeats)
        opacus, opacus_info = opacus_seconds_per_epoch(X, y, opacus_epochs, repeats)
    q = 256 / n
    t = time.perf_counter()
    sigma = calibrate_noise_multiplier(1.0, 1e-5, sampling_rate=q, steps=20 * round(n / 256))
    calib = time.perf_counter() - t
    rows.append(("skdp DPSGDClassifier (64, 64)", neural, "1.0x"))
    rows.append(("sklearn MLPClassifier (64, 64), non-private", mlp, f"skdp / MLP = {neural / mlp:.2f}x (target <= 2x)"))
    if opacus is not None:
        rows.append((f"Opacus (64, 64) [{opacus_info}]", opacus, f"Opacus / skdp = {opacus / neural:.1f}x (target >= 10x)"))
    else:
        rows.append(("Opacus", float("nan"), opacus_info))
    rows.append(("skdp DPSGDClassifier linear", linear, ""))
    rows.append(("sklearn SGDClassifier(log_loss), non-private", sgd, f"skdp / SGD = {linear / sgd:.2f}x (target <= 3x)"))
    print("| model | s / epoch | ratio |\n|---|---|---|")
    for name, sec, ratio in rows:
        print(f"| {name} | {sec:.4f} | {ratio} |")
    print(f"\nOne-off calibration of sigma for epsilon=1, delta=1e-5 over 20 epochs "
          f"(sigma={sigma:.4f}): {calib:.3f} s\n")


def bench_scaling(sizes, n_features=20):
    print(f"## Scaling: synthetic, {n_features} features, batch 256, 1 epoch\n")
    print("| model | n | steps | fit s | us / step | fit peak MB (tracemalloc) | data MB | peak / data |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for hidden in [(), (64, 64)]:
        for n in sizes:
            X = rng.uniform(0.0, 1.0, size=(n, n_features))
            y = (X[:, :5].sum(axis=1) > 2.5).astype(np.int64)

            def make():
                return DPSGDClassifier(hidden_layer_sizes=hidden, noise_multiplier=1.0,
                                       epsilon=None, batch_size=256, max_iter=1, classes=[0, 1],
                                       random_state=0)

            est = make()
            t = time.perf_counter()
            est.fit(X, y)
            seconds = time.perf_counter() - t
            tracemalloc.start()
            make().fit(X, y)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            data_mb = (X.nbytes + y.nbytes) / 1e6
            print(f"| {hidden or 'linear'} | {n:.0e} | {est.n_steps_} | {seconds:.3f} | "
                  f"{1e6 * seconds / est.n_steps_:.0f} | {peak / 1e6:.2f} | {data_mb:.1f} | "
                  f"{peak / 1e6 / data_mb:.3f} |")
    print()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--opacus-epochs", type=int, default=2)
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5, 1e6])
    args = parser.parse_args(argv)
    import numpy, sklearn
    print(f"Python {sys.version.split()[0]}, numpy {numpy.__version__}, scikit-learn "
          f"{sklearn.__version__}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f} at start\n")
    bench_adult(args.epochs, args.repeats, args.opacus_epochs)
    bench_scaling([int(s) for s in args.sizes])
    print(f"load average {os.getloadavg()[0]:.1f} at end")


if __name__ == "__main__":
    main()
