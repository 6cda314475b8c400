"""Peers of the benchmark suite, each in its own venv (benchmarks/bench_suite.py).

- diffprivlib needs scikit-learn < 1.8: it runs in its peer venv as a subprocess, through
  :func:`_peers.run_peer`.
- Opacus runs in its peer venv (CPU torch 2.13.0, opacus 1.6), also as a subprocess, so that
  torch's threads and imports stay out of the process that times skdp.

Where the venvs are and how to create them: benchmarks/_peers.py (``python
benchmarks/setup_peers.py``, or ``--setup-peers`` here; ``SKDP_BENCH_PEERS_DIR`` points at
existing ones).

Each script gets the arrays (``Xtr``, ``ytr``, ``Xte``, ``yte``) and a JSON list of jobs,
and prints one JSON line: per job, ``{"score": float, "seconds": float}`` or
``{"error": "Type: message"}``. A failing job does not stop the others.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _peers import PEER_REQUIREMENTS, peer_python, run_peer, setup_peers  # noqa: E402

DPL_CANDIDATES = [peer_python("diffprivlib")]
OPACUS_CANDIDATES = [peer_python("opacus")]
DPL_REQUIREMENTS = PEER_REQUIREMENTS["diffprivlib"]
OPACUS_REQUIREMENTS = PEER_REQUIREMENTS["opacus"]


def first_existing(paths):
    return next((p for p in paths if os.path.exists(p)), None)


def setup_peer_venvs():
    """Create the peer venvs (benchmarks/_peers.py; an existing one is kept)."""
    setup_peers()


def peer_version(python, module):
    res = subprocess.run([python, "-c", f"import {module}; print({module}.__version__)"],
                         capture_output=True, text=True)
    return res.stdout.strip() or "?"


DPL_SCRIPT = r"""
import json, sys, time, warnings
import numpy as np
from diffprivlib import models
warnings.simplefilter("ignore")
d = np.load(sys.argv[1])
jobs = json.loads(sys.argv[2])
out = []
for job in jobs:
    kw = dict(job["kwargs"])
    for key in ("bounds", "bounds_X", "bounds_y"):
        if key in kw:
            kw[key] = tuple(kw[key])
    t = time.perf_counter()
    try:
        if job["model"].startswith("PCA+"):
            # a pipeline: half of epsilon to each step (diffprivlib has no split of its own)
            from sklearn.pipeline import make_pipeline
            pca = dict(kw["pca"], bounds=tuple(kw["pca"]["bounds"]))
            model = dict(kw["model"])
            for key in ("bounds_X", "bounds_y"):
                if key in model:
                    model[key] = tuple(model[key])
            est = make_pipeline(
                models.PCA(epsilon=job["eps"] / 2, random_state=job["seed"], **pca),
                getattr(models, job["model"][4:])(epsilon=job["eps"] / 2,
                                                  random_state=job["seed"] + 10000, **model))
            score = float(est.fit(d["Xtr"], d["ytr"]).score(d["Xte"], d["yte"]))
            out.append({"score": score, "seconds": time.perf_counter() - t})
            continue
        est = getattr(models, job["model"])(epsilon=job["eps"], random_state=job["seed"], **kw)
        if job["model"] in ("KMeans", "PCA"):  # scored by the caller, against scikit-learn's
            est.fit(d["Xtr"])
            fitted = est.cluster_centers_ if job["model"] == "KMeans" else est.components_
            out.append({"fitted": np.asarray(fitted).tolist(), "seconds": time.perf_counter() - t})
            continue
        score = float(est.fit(d["Xtr"], d["ytr"]).score(d["Xte"], d["yte"]))
        out.append({"score": score, "seconds": time.perf_counter() - t})
    except Exception as exc:
        out.append({"error": f"{type(exc).__name__}: {str(exc)[:200]}"})
print(json.dumps(out))
"""


OPACUS_SCRIPT = r"""
import json, math, sys, time, warnings
import numpy as np, torch
from torch import nn
from opacus import PrivacyEngine
warnings.simplefilter("ignore")
torch.set_num_threads(int(sys.argv[3]))
d = np.load(sys.argv[1])
jobs = json.loads(sys.argv[2])
Xtr = torch.tensor(d["Xtr"], dtype=torch.float32)
Xte = torch.tensor(d["Xte"], dtype=torch.float32)


def build(d_in, hidden, d_out, activation):
    layers, width = [], d_in
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU() if activation == "relu" else nn.Tanh()]
        width = h
    return nn.Sequential(*layers, nn.Linear(width, d_out))


def run(job):
    p = job["params"]
    torch.manual_seed(job["seed"])
    n = len(Xtr)
    reg = job["task"] == "regression"
    if reg:
        lo, hi = job["bounds_y"]
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        ytr = torch.tensor((np.clip(d["ytr"], lo, hi) - mid) / half, dtype=torch.float32)[:, None]
        d_out, loss_fn = 1, nn.MSELoss()
    else:
        k = int(job["n_classes"])
        if k == 2:
            ytr = torch.tensor(d["ytr"], dtype=torch.float32)[:, None]
            d_out, loss_fn = 1, nn.BCEWithLogitsLoss()
        else:
            ytr = torch.tensor(d["ytr"], dtype=torch.long)
            d_out, loss_fn = k, nn.CrossEntropyLoss()
    model = build(Xtr.shape[1], p["hidden"], d_out, p["activation"])
    decay = [w for name, w in model.named_parameters() if name.endswith("weight")]
    rest = [w for name, w in model.named_parameters() if not name.endswith("weight")]
    groups = [{"params": decay, "weight_decay": p["alpha"]}, {"params": rest, "weight_decay": 0.0}]
    if p["optimizer"] == "adam":
        opt = torch.optim.Adam(groups, lr=p["learning_rate"])
    else:
        opt = torch.optim.SGD(groups, lr=p["learning_rate"], momentum=p["momentum"])
    if p.get("sampling_rate") is not None:  # Poisson rate q: Opacus's batch_size / n
        batch = max(1, round(p["sampling_rate"] * n))
    else:
        batch = min(256, n) if p["batch_size"] == "auto" else int(p["batch_size"])
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(Xtr, ytr),
                                         batch_size=batch, shuffle=True)
    if math.isfinite(job["eps"]):
        model, opt, loader = PrivacyEngine(accountant="rdp").make_private_with_epsilon(
            module=model, optimizer=opt, data_loader=loader, target_epsilon=job["eps"],
            target_delta=job["delta"], epochs=p["max_iter"], max_grad_norm=p["clip_norm"],
            poisson_sampling=True)
    scheduler = None
    if p.get("schedule") == "cosine":  # per step, to 0 at the last one, as skdp's
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=p["max_iter"] * len(loader))
    for _ in range(p["max_iter"]):
        for xb, yb in loader:
            if len(xb) > 0:
                opt.zero_grad()
                loss_fn(model(xb), yb).backward()
                opt.step()
            if scheduler is not None:
                scheduler.step()
    model.eval()
    with torch.no_grad():
        out = model(Xte).numpy()
    yte = d["yte"]
    if reg:
        pred = out[:, 0] * half + mid
        return 1.0 - np.sum((yte - pred) ** 2) / np.sum((yte - yte.mean()) ** 2)
    pred = (out[:, 0] > 0).astype(int) if out.shape[1] == 1 else out.argmax(1)
    return float(np.mean(pred == yte))


out = []
for job in jobs:
    t = time.perf_counter()
    try:
        out.append({"score": float(run(job)), "seconds": time.perf_counter() - t})
    except Exception as exc:
        out.append({"error": f"{type(exc).__name__}: {str(exc)[:200]}"})
print(json.dumps(out))
"""


def run_jobs(script, python, task, jobs, *extra):
    """Run ``jobs`` on ``task``'s arrays in ``python``; a list of per-job result dicts.

    If the whole subprocess fails, every job gets that error (the suite goes on).
    """
    if not jobs:
        return []
    arrays = dict(Xtr=task.X_train, ytr=task.y_train, Xte=task.X_test, yte=task.y_test)
    try:
        return run_peer(script, arrays, json.dumps(jobs), *extra, python=python)
    except Exception as exc:  # the subprocess died: report it per cell
        message = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200]}"
        return [{"error": message}] * len(jobs)
