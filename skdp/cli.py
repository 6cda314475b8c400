"""The ``skdp`` command line: privacy accounting and ledgers from a shell.

::

    skdp account   --noise-multiplier 4 --sampling-rate 0.01 --steps 10000 --delta 1e-5
    skdp account   --noise-multiplier 4 --sampling-rate 0.01 --steps 10000 --delta 1e-5 --accountant rdp
    skdp calibrate --target-epsilon 1 --delta 1e-5 --sampling-rate 0.01 --epochs 100
    skdp budget show study.sqlite

Every command takes ``--json`` for machine-readable output. Bad input exits
with status 2 and a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from typing import TYPE_CHECKING

from ._version import __version__
from .accounting import (
    calibrate_noise_multiplier,
    epsilon_for,
    poisson_subsampled_gaussian_rdp,
    sampled_without_replacement_gaussian_rdp,
)
from .budget import PrivacyBudget

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]

_SAMPLINGS = {
    "poisson": ("poisson", poisson_subsampled_gaussian_rdp),
    "without-replacement": ("without_replacement", sampled_without_replacement_gaussian_rdp),
}


class _UsageError(Exception):
    """Bad input on the command line: one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the whole usage before its error; one line is enough.
    def error(self, message):
        raise _UsageError(f"{self.prog}: error: {message}")


def _count(text):
    """An integer count; "1e4" is accepted when it is a whole number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number; got {text!r}") from None
    if not math.isfinite(value) or not value.is_integer():
        raise argparse.ArgumentTypeError(f"expected a whole number; got {text!r}")
    return int(value)


def _steps(args):
    """``--steps``, or ``--epochs`` counted as DP-SGD counts them; checks ``--sampling-rate``.

    An epoch is ``max(1, round(1 / q))`` steps, the rule of
    :func:`skdp._dpsgd.dpsgd_schedule`, so ``--epochs E`` reports exactly what
    ``DPSGDClassifier(max_iter=E, sampling_rate=q)`` (or ``batch_size / n = q``)
    runs and charges. A fractional E is rounded up to whole steps.
    """
    q = args.sampling_rate
    if not 0 < q <= 1:  # also rejects NaN
        raise ValueError(f"sampling_rate (--sampling-rate) must be in (0, 1]; got {q!r}.")
    if args.steps is not None:
        if args.steps < 1:
            raise ValueError(f"--steps must be at least 1; got {args.steps!r}.")
        return args.steps
    epochs = args.epochs
    if not (math.isfinite(epochs) and epochs > 0):
        raise ValueError(f"--epochs must be finite and > 0; got {epochs!r}.")
    from ._dpsgd import dpsgd_schedule  # the DP-SGD engine, only for --epochs

    _, steps_per_epoch, _ = dpsgd_schedule(None, None, 1, sampling_rate=q)
    # rounding to 9 decimals first keeps float noise from adding a step
    return math.ceil(round(epochs * steps_per_epoch, 9))


def _json_value(value):
    # Strict JSON has no inf or NaN: inf is written "inf" (as in the ledger
    # file) and NaN null.
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value


def _print_json(data):
    print(json.dumps(_json_value(data), indent=2, allow_nan=False))


def _order_text(order):
    if math.isnan(order):
        return "none"
    if order == math.inf:
        return "inf (pure DP bound)"
    return f"{order:g}"


def _epsilon_and_order(args, curve_of, name, sigma, steps):
    """ε at --delta, the optimal Rényi order and the accountant that gave ε.

    The order is NaN when the PLD accountant gave ε (it has no order). With
    ``--accountant tightest`` (the default) ε is the smaller of both, a valid
    upper bound since both are.
    """
    rdp_eps, order = math.inf, math.nan
    if args.accountant in ("rdp", "tightest"):
        rdp_eps, order = curve_of(args.sampling_rate, sigma, steps).epsilon_and_order(args.delta)
        if args.accountant == "rdp":
            return rdp_eps, order, "rdp"
    pld_eps = epsilon_for(sigma, args.delta, sampling_rate=args.sampling_rate, steps=steps,
                          sampling=name, accountant="pld")
    if pld_eps < rdp_eps:
        return pld_eps, math.nan, "pld"
    return rdp_eps, order, "rdp"


def _how(accountant, order):
    if accountant == "pld":
        return "privacy loss distribution accountant"
    return f"Renyi DP accountant, optimal order {_order_text(order)}"


def _account(args):
    name, curve_of = _SAMPLINGS[args.sampling]
    steps = _steps(args)
    if args.delta == 0:
        raise ValueError("--delta must be > 0: the Gaussian mechanism has no pure ε-DP guarantee.")
    eps, order, used = _epsilon_and_order(args, curve_of, name, args.noise_multiplier, steps)
    result = {
        "epsilon": eps,
        "delta": args.delta,
        "order": order,
        "noise_multiplier": args.noise_multiplier,
        "sampling_rate": args.sampling_rate,
        "steps": steps,
        "sampling": name,
        "accountant": args.accountant,
        "composed_by": used,
    }
    if args.json:
        _print_json(result)
    else:
        print(f"epsilon = {eps:.4f} at delta = {args.delta:g} ({_how(used, order)})")
        print(
            f"noise multiplier {args.noise_multiplier:g}, sampling rate {args.sampling_rate:g} "
            f"({args.sampling}), {steps} steps"
        )


def _calibrate(args):
    name, curve_of = _SAMPLINGS[args.sampling]
    steps = _steps(args)
    sigma = calibrate_noise_multiplier(
        args.target_epsilon,
        args.delta,
        sampling_rate=args.sampling_rate,
        steps=steps,
        sampling=name,
        accountant=args.accountant,
    )
    eps, order, used = _epsilon_and_order(args, curve_of, name, sigma, steps)
    result = {
        "noise_multiplier": sigma,
        "epsilon": eps,
        "target_epsilon": args.target_epsilon,
        "delta": args.delta,
        "order": order,
        "sampling_rate": args.sampling_rate,
        "steps": steps,
        "sampling": name,
        "accountant": args.accountant,
        "composed_by": used,
    }
    if args.json:
        _print_json(result)
    else:
        print(f"noise multiplier sigma = {sigma:.4f}")
        print(
            f"gives epsilon = {eps:.4f} <= {args.target_epsilon:g} at delta = {args.delta:g} "
            f"({_how(used, order)}) with sampling rate "
            f"{args.sampling_rate:g} ({args.sampling}), {steps} steps"
        )


def _budget_show(args):
    budget = PrivacyBudget.open(args.path)
    if args.json:
        _print_json(budget.to_dict())
    else:
        print(budget.report())


def _add_sampling_arguments(parser):
    parser.add_argument(
        "--sampling-rate",
        type=float,
        default=1.0,
        metavar="Q",
        help="probability that a row is in a batch (Poisson), or batch size / "
        "dataset size (without replacement); default 1",
    )
    length = parser.add_mutually_exclusive_group(required=True)
    length.add_argument("--steps", type=_count, metavar="T", help="number of noisy steps")
    length.add_argument(
        "--epochs",
        type=float,
        metavar="E",
        help="number of epochs instead of --steps: E * max(1, round(1 / Q)) steps, as "
        "DP-SGD with max_iter=E runs",
    )
    parser.add_argument("--delta", type=float, required=True, metavar="D", help="δ of the (ε, δ) guarantee")
    parser.add_argument(
        "--sampling",
        choices=sorted(_SAMPLINGS),
        default="poisson",
        help="how batches are drawn (default: poisson)",
    )
    parser.add_argument(
        "--accountant",
        choices=("tightest", "rdp", "pld"),
        default="tightest",
        help="tightest (default): the smaller epsilon of both accountants, valid since both "
        "are upper bounds; rdp: Renyi DP; pld: privacy loss distributions (never below the "
        "exact epsilon)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def _parser():
    parser = _Parser(
        prog="skdp",
        description="Differential-privacy accounting and privacy ledgers for skdp.",
    )
    parser.add_argument("--version", action="version", version=f"skdp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    account = commands.add_parser(
        "account",
        help="ε of a (subsampled) Gaussian mechanism run for some steps",
        description="Print ε at δ, and the optimal Rényi order, of the (subsampled) "
        "Gaussian mechanism composed over the steps (DP-SGD accounting).",
    )
    account.add_argument(
        "--noise-multiplier", type=float, required=True, metavar="S",
        help="σ = noise std / L2 sensitivity",
    )
    _add_sampling_arguments(account)
    account.set_defaults(run=_account)

    calibrate = commands.add_parser(
        "calibrate",
        help="smallest noise multiplier σ for a target ε",
        description="Print the smallest noise multiplier σ whose composed ε at δ is "
        "at most the target.",
    )
    calibrate.add_argument("--target-epsilon", type=float, required=True, metavar="E", help="target ε")
    _add_sampling_arguments(calibrate)
    calibrate.set_defaults(run=_calibrate)

    budget = commands.add_parser(
        "budget",
        help="inspect a privacy ledger file",
        description="Inspect a PrivacyBudget ledger file.",
    )
    budget_commands = budget.add_subparsers(dest="budget_command", metavar="ACTION", parser_class=_Parser)
    budget_commands.required = True
    show = budget_commands.add_parser(
        "show",
        help="list the charges and the composed total",
        description="List each charge (id, time, label, ε alone, running total) and "
        "the composed total of a ledger, with the cap, δ and orders stored in it.",
    )
    show.add_argument("path", help="the ledger file (PrivacyBudget(ledger=PATH))")
    show.add_argument(
        "--json",
        action="store_true",
        help="print JSON. Each charge's epsilon and delta are what it costs alone: it is "
        "(epsilon, delta)-DP, with delta the budget's delta (its own delta, 0 for pure "
        "epsilon-DP, when its pure bound is tighter); total_epsilon composes all charges up "
        "to it at the budget's delta; approximate_delta is the delta part of an "
        "(epsilon, delta)-DP charge without an RDP analysis (it adds up across charges)",
    )
    show.set_defaults(run=_budget_show)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``skdp`` command with ``argv`` (default: ``sys.argv[1:]``).

    Returns the exit status: 0 on success, 2 on bad input (with one line on
    stderr).

    Examples
    --------
    >>> from skdp.cli import main
    >>> main(["account", "--noise-multiplier", "4", "--sampling-rate", "0.01",
    ...       "--steps", "10000", "--delta", "1e-5"])
    epsilon = 0.9471 at delta = 1e-05 (privacy loss distribution accountant)
    noise multiplier 4, sampling rate 0.01 (poisson), 10000 steps
    0
    >>> main(["account", "--noise-multiplier", "4", "--sampling-rate", "0.01",
    ...       "--steps", "10000", "--delta", "1e-5", "--accountant", "rdp"])
    epsilon = 1.0355 at delta = 1e-05 (Renyi DP accountant, optimal order 17)
    noise multiplier 4, sampling rate 0.01 (poisson), 10000 steps
    0
    """
    try:
        args = _parser().parse_args(argv)
        args.run(args)
    except _UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except (ValueError, OSError, sqlite3.Error) as exc:
        reason = " ".join(str(exc).split())  # one line
        print(f"skdp: error: {reason}", file=sys.stderr)
        return 2
    return 0
