"""
Quick start: the accountant and the shared privacy budget at work
=================================================================

Run it with ``python examples/quickstart.py``. It trains nothing: it shows how
skdp prices releases in Rényi DP, and how one budget refuses the release that
would cross its cap.
"""

from skdp import BudgetExceededError, PrivacyBudget
from skdp.accounting import gaussian_rdp, laplace_rdp


def main():
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    print(f"A budget of ε = {budget.epsilon} at δ = {budget.delta:g}.\n")

    releases = [
        ("mean age (Gaussian, σ = 8)", gaussian_rdp(8.0)),
        ("histogram of education (Laplace, scale 10)", laplace_rdp(10.0)),
        ("mean hours per week (Gaussian, σ = 8)", gaussian_rdp(8.0)),
        ("variance of income (Gaussian, σ = 8)", gaussian_rdp(8.0)),
        ("one release too many (Gaussian, σ = 3)", gaussian_rdp(3.0)),
    ]
    naive = 0.0
    for label, curve in releases:
        alone = curve.epsilon(budget.delta)
        try:
            budget.charge(curve, label=label)
        except BudgetExceededError as exc:
            print(f"refused: {label}\n  {exc}\n")
            continue
        naive += alone
        eps, _ = budget.spent()
        print(f"charged: {label:45s} ε alone {alone:.3f}  total {eps:.3f}  (sum of ε: {naive:.3f})")

    print()
    print(budget.report())


if __name__ == "__main__":
    main()
