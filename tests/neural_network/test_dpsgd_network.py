"""The DP-SGD network: ghost-norm clipping against explicit per-example gradients, and MLPs."""

import math

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

from skdp._dpsgd import DenseNetwork, clip_factors, clipped_gradient_sum, make_loss
from skdp.neural_network import DPSGDClassifier, DPSGDRegressor


def _explicit_per_example_gradients(network, X, Y, loss, activation):
    """Each example's full gradient, by its own backward pass (a loop: fine in a test)."""
    act = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh}[activation]
    dact = {"relu": lambda z: (z > 0).astype(float), "tanh": lambda z: 1 - np.tanh(z) ** 2}[
        activation
    ]
    grads = []
    for x, y in zip(X, Y):
        inputs, pre = [x], []
        for k, (w, b) in enumerate(zip(network.weights, network.biases)):
            z = inputs[-1] @ w + b
            pre.append(z)
            inputs.append(act(z) if k < len(network.weights) - 1 else z)
        _, g = loss(inputs[-1][None, :], y[None, :])
        g = g[0]
        layer_grads = []
        for k in range(len(network.weights) - 1, -1, -1):
            layer_grads.insert(0, (np.outer(inputs[k], g), g.copy()))
            if k:
                g = (network.weights[k] @ g) * dact(pre[k - 1])
        grads.append(np.concatenate([np.concatenate([gw.ravel(), gb]) for gw, gb in layer_grads]))
    return np.array(grads)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
@pytest.mark.parametrize(
    "loss_name, n_outputs",
    [("log_loss_binary", 1), ("log_loss_multinomial", 3), ("hinge", 3),
     ("modified_huber", 1), ("squared_error", 2), ("huber", 1)],
)
def test_ghost_norm_clipping_equals_explicit_clipping(activation, loss_name, n_outputs):
    rng = np.random.default_rng(0)
    network = DenseNetwork((5, 7, 4, n_outputs), activation, rng)  # two hidden layers
    network.params += rng.normal(scale=0.3, size=network.n_params)  # biases away from 0
    X = rng.normal(size=(40, 5)) * rng.uniform(0.1, 3.0, size=(40, 1))  # varied norms
    if loss_name == "log_loss_multinomial":
        Y = np.eye(n_outputs)[rng.integers(n_outputs, size=40)]
    elif loss_name == "log_loss_binary":
        Y = rng.integers(2, size=(40, 1)).astype(float)
    elif loss_name in ("hinge", "modified_huber"):
        Y = rng.choice([-1.0, 1.0], size=(40, n_outputs))
    else:
        Y = rng.normal(size=(40, n_outputs))
    loss = make_loss(loss_name, huber_threshold=0.5)
    explicit = _explicit_per_example_gradients(network, X, Y, loss, activation)
    norms = np.linalg.norm(explicit, axis=1)
    clip_norm = float(np.median(norms))  # half the examples are clipped
    assert np.sum(norms > clip_norm) >= 15
    with np.errstate(divide="ignore"):  # zero gradients (satisfied margins) are not clipped
        clipped = explicit * np.minimum(1.0, clip_norm / norms)[:, None]
    np.testing.assert_allclose(
        clipped_gradient_sum(network, loss, X, Y, clip_norm), clipped.sum(axis=0),
        rtol=0, atol=1e-10,
    )
    np.testing.assert_allclose(
        clipped_gradient_sum(network, loss, X, Y, None), explicit.sum(axis=0), rtol=0, atol=1e-10
    )
    # the ghost norms themselves
    activations = network.forward(X)
    _, dloss = loss(activations[-1], Y)
    sq = network.per_example_sq_norms(activations, network.output_gradients(activations, dloss))
    np.testing.assert_allclose(np.sqrt(sq), norms, rtol=1e-12)
    assert np.all(clip_factors(sq, clip_norm) <= 1.0)


def test_explicit_gradients_match_finite_differences():
    # checks the test's own reference: explicit backprop = numerical gradient of the loss
    rng = np.random.default_rng(1)
    network = DenseNetwork((3, 4, 5, 2), "tanh", rng)
    X, Y = rng.normal(size=(2, 3)), np.eye(2)[[0, 1]]
    loss = make_loss("log_loss_multinomial")
    explicit = _explicit_per_example_gradients(network, X, Y, loss, "tanh")[0]
    numeric = np.empty(network.n_params)
    for j in range(network.n_params):
        old = network.params[j]
        values = []
        for h in (1e-6, -1e-6):
            network.params[j] = old + h
            values.append(loss(network.predict(X[:1]), Y[:1])[0][0])
        network.params[j] = old
        numeric[j] = (values[0] - values[1]) / 2e-6
    np.testing.assert_allclose(explicit, numeric, atol=1e-7)


def test_neural_epsilon_inf_matches_mlp_classifier():
    X, y = make_moons(n_samples=3000, noise=0.25, random_state=0)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=0)
    ours = DPSGDClassifier(hidden_layer_sizes=(32, 32), epsilon=math.inf, learning_rate=3e-3,
                           max_iter=60, random_state=0).fit(X_tr, y_tr)
    mlp = MLPClassifier(hidden_layer_sizes=(32, 32), batch_size=256, max_iter=300,
                        random_state=0).fit(X_tr, y_tr)
    # "within 0.5 points": not worse by more than 0.005 accuracy on 1500 test rows
    assert ours.score(X_te, y_te) >= mlp.score(X_te, y_te) - 0.005
    assert len(ours.coefs_) == 3 and ours.coefs_[1].shape == (32, 32)


def test_private_mlp_learns_and_regressor_runs():
    X, y = make_moons(n_samples=3000, noise=0.2, random_state=1)
    clf = DPSGDClassifier(hidden_layer_sizes=(16,), activation="tanh", epsilon=2.0,
                          random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.8 and clf.epsilon_spent_ <= 2.0
    reg = DPSGDRegressor(hidden_layer_sizes=(16,), epsilon=2.0, bounds_y=(-1, 2),
                         random_state=0).fit(X, y.astype(float))
    assert reg.score(X, y) > 0.3


# -- initialisation --------------------------------------------------------------------------
def test_hidden_layers_start_as_pytorch_linear_layers():
    # Every weight and bias uniform on ±1/sqrt(fan_in) (PyTorch nn.Linear): for
    # 4,000 draws per layer the extremes lie within 0.2% of the bound and the
    # mean within 4 standard errors of 0.
    network = DenseNetwork((200, 20, 200), "relu", np.random.default_rng(0))
    for w, b in zip(network.weights, network.biases):
        bound = 1.0 / math.sqrt(w.shape[0])
        for values in (w.ravel(), b):
            assert np.all(np.abs(values) <= bound)
        assert np.abs(w).max() > 0.998 * bound
        se = bound / math.sqrt(3 * w.size)
        assert abs(w.mean()) < 4 * se
        assert np.any(b != 0)  # biases are drawn too, not zero


def test_a_linear_model_starts_at_zero():
    network = DenseNetwork((30, 3), "relu", np.random.default_rng(0))
    assert np.all(network.params == 0)
