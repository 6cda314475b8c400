"""A small dense network in numpy with per-example gradient norms for free.

The network keeps all its parameters in one flat vector, so the optimisers and
the Gaussian noise work on a single array. Each dense layer ``l`` computes
``Z_l = A_{l-1} W_l + b_l``; the per-example gradient of ``W_l`` for row ``i``
is the outer product ``a_i g_i^T`` (``a_i`` its input activations, ``g_i`` the
gradient of that row's loss with respect to ``Z_l``), so its squared Frobenius
norm is ``|a_i|^2 |g_i|^2``, and the bias gradient adds ``|g_i|^2``. This is the
ghost-norm identity (Goodfellow 2015, "Efficient per-example gradient
computations", eq. for fully connected layers; Li et al. 2021, "Large language
models can be strong differentially private learners", Sec. 4). Summing it over
the layers gives every per-example gradient norm from quantities a normal
backward pass already holds: memory O(batch x width), never a per-example
gradient.

Because every layer's weight gradient is linear in the output gradients, the
sum of the clipped per-example gradients ``sum_i c_i a_i g_i^T`` is
``A^T (c * G)``: the re-weighted backward pass multiplies the per-example
output gradients by ``c_i`` and costs one matrix product per layer.
"""

import numpy as np

__all__ = ["DenseNetwork", "LOSSES"]


# -- activations -------------------------------------------------------------
def _relu(z):
    return np.maximum(z, 0.0, out=z)


def _relu_grad(a):
    # derivative of relu written in terms of its output a = relu(z)
    return a > 0.0


def _tanh(z):
    return np.tanh(z, out=z)


def _tanh_grad(a):
    return 1.0 - a * a


ACTIVATIONS = {"relu": (_relu, _relu_grad), "tanh": (_tanh, _tanh_grad)}


# -- losses: value and gradient with respect to the network output f ----------
# Each takes (f, y) with f of shape (batch, n_outputs) and returns the
# per-example loss (batch,) and dL_i/df_i (batch, n_outputs). Classification
# targets for the "margin" losses are +-1 codes of the same shape as f.
def _sigmoid(f):
    out = np.empty_like(f)
    pos = f >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-f[pos]))
    ez = np.exp(f[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


def _log_loss_binary(f, y):
    # y in {0, 1}; logistic loss log(1 + exp(f)) - y f
    loss = np.logaddexp(0.0, f) - y * f
    return loss.sum(axis=1), _sigmoid(f) - y


def _softmax(f):
    z = f - f.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def _log_loss_multinomial(f, y):
    # y one-hot; cross-entropy of the softmax
    z = f - f.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(z).sum(axis=1, keepdims=True))
    loss = -(y * (z - log_norm)).sum(axis=1)
    return loss, _softmax(f) - y


def _hinge(f, y):
    # y in {-1, +1}; max(0, 1 - y f), as scikit-learn's SGDClassifier
    margin = y * f
    loss = np.maximum(0.0, 1.0 - margin)
    return loss.sum(axis=1), np.where(margin < 1.0, -y, 0.0)


def _modified_huber(f, y):
    # y in {-1, +1}; Zhang 2004: (1 - z)^2 for z >= -1 else -4 z, with z = y f
    z = y * f
    loss = np.where(z >= 1.0, 0.0, np.where(z >= -1.0, (1.0 - z) ** 2, -4.0 * z))
    dz = np.where(z >= 1.0, 0.0, np.where(z >= -1.0, -2.0 * (1.0 - z), -4.0))
    return loss.sum(axis=1), y * dz


def _squared_error(f, y):
    r = f - y
    return 0.5 * (r * r).sum(axis=1), r


def _huber(threshold):
    def huber(f, y):
        r = f - y
        a = np.abs(r)
        loss = np.where(a <= threshold, 0.5 * r * r, threshold * (a - 0.5 * threshold))
        return loss.sum(axis=1), np.clip(r, -threshold, threshold)

    return huber


LOSSES = {
    "log_loss_binary": _log_loss_binary,
    "log_loss_multinomial": _log_loss_multinomial,
    "hinge": _hinge,
    "modified_huber": _modified_huber,
    "squared_error": _squared_error,
}


def make_loss(name, *, huber_threshold=1.0):
    """The loss function ``(f, y) -> (loss_i, dloss_i/df_i)`` called ``name``."""
    if name == "huber":
        return _huber(float(huber_threshold))
    return LOSSES[name]


class DenseNetwork:
    """A multilayer perceptron with a flat parameter vector.

    Parameters
    ----------
    layer_sizes : sequence of int
        ``(n_features, *hidden, n_outputs)``; with no hidden layer the network
        is a linear model.
    activation : {"relu", "tanh"}
        Activation of the hidden layers; the output layer is linear.
    rng : numpy.random.Generator
        Draws the initial parameters. A network with hidden layers starts as
        PyTorch's ``nn.Linear`` does: every weight and bias uniform on
        ±1/√fan_in (He et al. 2015's uniform rule with a = √5; PyTorch
        ``reset_parameters``), so the initial outputs are small and every ReLU
        unit starts active on part of the input. Under DP noise this trains
        where Glorot weights with zero biases stayed at the majority class (a
        455-row table with ``hidden_layer_sizes=(32,)``, measured against
        Opacus's identical network). A linear model (no hidden layer) starts at
        zero, as scikit-learn's ``SGDClassifier`` does: its loss is convex and
        needs no symmetry breaking.
    """

    def __init__(self, layer_sizes, activation, rng, *, dtype=np.float64):
        self.layer_sizes = tuple(int(s) for s in layer_sizes)
        self.activation = activation
        self._act, self._act_grad = ACTIVATIONS[activation]
        shapes = []
        for fan_in, fan_out in zip(self.layer_sizes[:-1], self.layer_sizes[1:]):
            shapes.append(((fan_in, fan_out), (fan_out,)))
        self.n_params = sum(a * b + b for (a, b), _ in shapes)
        self.params = np.zeros(self.n_params, dtype=dtype)
        self.weights, self.biases = self._views(self.params, shapes)
        self._shapes = shapes
        if len(self.layer_sizes) > 2:
            for w, b in zip(self.weights, self.biases):
                bound = 1.0 / np.sqrt(w.shape[0])
                w[...] = rng.uniform(-bound, bound, size=w.shape)
                b[...] = rng.uniform(-bound, bound, size=b.shape)
        # mask of the weights (not the biases): L2 regularisation applies there
        self.weight_mask = np.zeros(self.n_params, dtype=bool)
        for w in self._views(self.weight_mask, shapes)[0]:
            w[...] = True

    @staticmethod
    def _views(flat, shapes):
        weights, biases, start = [], [], 0
        for (w_shape, b_shape) in shapes:
            size = w_shape[0] * w_shape[1]
            weights.append(flat[start:start + size].reshape(w_shape))
            start += size
            biases.append(flat[start:start + b_shape[0]])
            start += b_shape[0]
        return weights, biases

    def gradient_views(self, flat):
        """Per-layer views ``(weights, biases)`` into a flat gradient vector."""
        return self._views(flat, self._shapes)

    def forward(self, X):
        """All layer activations ``[X, A_1, ..., f]``; the last is the output."""
        activations = [X]
        last = len(self.weights) - 1
        for k, (w, b) in enumerate(zip(self.weights, self.biases)):
            z = activations[-1] @ w
            z += b
            if k < last:
                z = self._act(z)
            activations.append(z)
        return activations

    def predict(self, X):
        """The network output f(X)."""
        return self.forward(X)[-1]

    def output_gradients(self, activations, dloss):
        """Per-example gradients of the loss with respect to each layer's pre-activation.

        ``dloss`` holds ``dL_i/df_i``. Returns ``[G_1, ..., G_L]``, where row ``i``
        of ``G_l`` is the gradient of example ``i``'s loss with respect to
        ``Z_l``. This is an ordinary backward pass that stops before the
        weight gradients.
        """
        grads = [dloss]
        for k in range(len(self.weights) - 1, 0, -1):
            g = grads[0] @ self.weights[k].T
            g *= self._act_grad(activations[k])
            grads.insert(0, g)
        return grads

    @staticmethod
    def per_example_sq_norms(activations, out_grads):
        """Squared L2 norm of each example's full parameter gradient (ghost norm).

        For each layer: ``|g_i|^2 (|a_i|^2 + 1)``, the ``+ 1`` for the bias
        (Goodfellow 2015; Li et al. 2021).
        """
        total = 0.0
        for a, g in zip(activations[:-1], out_grads):
            total = total + np.einsum("ij,ij->i", g, g) * (np.einsum("ij,ij->i", a, a) + 1.0)
        return total

    def weighted_gradient(self, activations, out_grads, weights, out):
        """``sum_i weights_i * grad_i`` written into the flat vector ``out``.

        The re-weighted backward pass: each layer's weight gradient is
        ``A^T (weights * G)`` and its bias gradient ``sum_i weights_i g_i``.
        ``weights=None`` means all ones.
        """
        gw, gb = self.gradient_views(out)
        for k, (a, g) in enumerate(zip(activations[:-1], out_grads)):
            if weights is not None:
                g = g * weights[:, None]
            np.matmul(a.T, g, out=gw[k])
            g.sum(axis=0, out=gb[k])
        return out
