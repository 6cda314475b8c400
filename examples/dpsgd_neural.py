"""
A neural network trained by DP-SGD on Adult, inside a pipeline with one total ε
===============================================================================

Run it with ``python examples/dpsgd_neural.py``. ``DPSGDClassifier`` with
``hidden_layer_sizes`` is a multilayer perceptron trained by DP-SGD (Abadi et
al. 2016: Poisson-sampled batches, per-example clipping, Gaussian noise,
Rényi-DP accounting). The features come from the public schema
(:func:`skdp.datasets.adult_preprocessor`), so the pipeline learns nothing
from the rows except through DP-SGD, and the fit charges the budget once.
"""

import sys

import numpy as np

from skdp import PrivacyBudget
from skdp.datasets import adult_preprocessor, load_adult
from skdp.linear_model import DPSGDClassifier
from skdp.pipeline import make_pipeline


def main(n_train=None, n_test=None, *, epsilon=1.0, hidden_layer_sizes=(32,), max_iter=5,
         random_state=None, out=sys.stdout):
    """Train an MLP with DP-SGD at (``epsilon``, 1e-5); return the model, budget and accuracy.

    ``n_train`` / ``n_test`` keep that many rows drawn at random (quick tests);
    ``max_iter`` is the number of epochs.
    """
    rng = np.random.default_rng(random_state)
    X, y = load_adult(return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    if n_train is not None:
        keep = rng.choice(len(y), size=n_train, replace=False)
        X, y = X[keep], y[keep]
    if n_test is not None:
        keep = rng.choice(len(y_test), size=n_test, replace=False)
        X_test, y_test = X_test[keep], y_test[keep]

    budget = PrivacyBudget(epsilon=epsilon, delta=1e-5)
    model = make_pipeline(
        adult_preprocessor(),  # the public schema: learns nothing from the rows
        DPSGDClassifier(
            hidden_layer_sizes=hidden_layer_sizes,
            max_iter=max_iter,
            learning_rate=1e-2,
            classes=[0, 1],  # the public label set
            random_state=random_state,
        ),
        epsilon=epsilon,  # the pipeline's total: its one private step gets it all
        budget=budget,
    )
    model.fit(X, y)
    mlp = model[-1]
    accuracy = model.score(X_test, y_test)
    print(f"DP-SGD MLP {hidden_layer_sizes} on {len(y)} rows: {mlp.n_steps_} steps, "
          f"sampling rate {mlp.sampling_rate_:.4g}, noise multiplier {mlp.noise_multiplier_:.3f}",
          file=out)
    print(f"Test accuracy: {accuracy:.4f}; spent ε = {mlp.epsilon_spent_:.4f} at δ = 1e-5", file=out)
    print(file=out)
    print(budget.report(), file=out)
    return {"model": model, "budget": budget, "accuracy": accuracy}


if __name__ == "__main__":
    main()
