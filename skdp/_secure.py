"""A random generator that draws every bit from the operating system's CSPRNG.

``secure=True`` in an estimator replaces its :class:`numpy.random.Generator`
by :class:`SecureGenerator`: the same methods (only those skdp calls), each
vectorised in numpy over bytes from :func:`os.urandom` (``getrandom(2)`` on
Linux, a cryptographically secure generator: Linux's ChaCha20 CSPRNG). Nobody
can predict its output from earlier outputs or recover a seed, which is what
can be done with numpy's PCG64 (O'Neill 2014; its state follows from a few
outputs, Bouillaguet, Martinez & Sauvage 2020).

How each distribution is made from uniform bits (``u`` a 53-bit uniform on
[0, 1): the top 53 bits of a 64-bit word times 2^-53; ``v`` an open uniform
on (0, 1): (k + 1/2) 2^-52 for a 52-bit k, both exact in binary64):

- ``integers``: a 64-bit word ``w`` rejected when ``w < 2^64 mod r`` and
  ``w mod r`` otherwise: uniform on ``r`` values with no modulo bias
  (Lemire 2019, "Fast random integer generation in an interval", sec. 3).
- ``standard_normal``: Box–Muller (Box & Muller 1958), ``sqrt(-2 ln v) cos(2π u)``
  and the matching sine: exact normals of the discretised uniforms; no draw
  exceeds ``sqrt(2 ln 2^53)`` ≈ 8.57 in absolute value (the normal law puts
  about 1e-17 there).
- ``laplace``: inverse CDF, ``-sign(v - 1/2) ln(1 - 2|v - 1/2|)``
  (every step exact in binary64 for this grid of ``v``).
- ``gumbel``: inverse CDF, ``-ln(-ln v)``.
- ``poisson``: the number of arrivals of a rate-1 Poisson process (sums of
  ``-ln v``) in [0, λ] (Knuth, TAOCP vol. 2, 3.4.1 F).
- ``binomial``: successes among n trials, by geometric jumps between them
  (inverse CDF of the geometric law, Devroye 1986, X.2).
- ``permutation``: the order of distinct 64-bit keys (redrawn on a tie, so
  every order is equally likely); ``choice(replace=False)``: the first
  distinct values of uniform integers (an exchangeable sequence, so a
  uniformly random ordered sample).

This is still floating-point noise: it protects against predicting the
generator, not against the floating-point attacks on continuous noise
(Mironov 2012); see :ref:`secure_randomness`.

It imports nothing from skdp and stands on the ground floor, under the
accounting, whose distributions of a number of runs sample with it too.
"""

import math
import os

import numpy as np

__all__ = ["SecureGenerator"]

_TWO_53 = 2.0**-53
_TWO_52 = 2.0**-52


def _shape(size):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    return tuple(int(s) for s in size)


def _finish(values, size, *params):
    """``values`` shaped as numpy would: a Python scalar for a scalar call."""
    if size is None and all(np.ndim(p) == 0 for p in params) and values.size == 1:
        return values.reshape(()).item()
    return values


class SecureGenerator:
    """A :class:`numpy.random.Generator` look-alike over :func:`os.urandom`.

    It has the methods skdp's estimators call on their generator, with
    numpy's signatures (the arguments skdp uses), and no seed: every
    instance reads fresh bytes from the operating system. Made by
    :func:`skdp.utils.check_generator` with ``secure=True``.

    Examples
    --------
    >>> from skdp.utils import check_generator
    >>> rng = check_generator(None, secure=True)
    >>> float(rng.random()) < 1.0
    True
    >>> sorted(rng.permutation(4).tolist())
    [0, 1, 2, 3]
    """

    def __init__(self, *, source=None):
        # source: a callable n -> n bytes, for tests only (seeded_secure of tests/_testing.py);
        # None reads os.urandom, looked up at each call.
        self._source = source

    def __repr__(self):
        return "SecureGenerator(os.urandom)" if self._source is None else "SecureGenerator(test)"

    # -- bits -------------------------------------------------------------
    def bytes(self, length):
        """``length`` random bytes."""
        return (self._source or os.urandom)(int(length))

    def _words(self, n):
        return np.frombuffer(self.bytes(8 * int(n)), dtype=np.uint64)

    def _unit(self, n):
        """``n`` uniforms on [0, 1): 53 random bits each."""
        return (self._words(n) >> np.uint64(11)).astype(np.float64) * _TWO_53

    def _open_unit(self, n):
        """``n`` uniforms on (0, 1): (k + 1/2) 2^-52 for 52 random bits k."""
        return ((self._words(n) >> np.uint64(12)).astype(np.float64) + 0.5) * _TWO_52

    def _draw(self, make, size, *params):
        shape = _shape(size) if size is not None else np.broadcast_shapes(
            *(np.shape(p) for p in params))
        n = math.prod(shape)
        return make(n).reshape(shape)

    # -- continuous -------------------------------------------------------
    def random(self, size=None):
        """Uniforms on [0, 1) with 53 random bits."""
        return _finish(self._draw(self._unit, size), size)

    def uniform(self, low=0.0, high=1.0, size=None):
        """Uniforms on [low, high)."""
        low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        u = self._draw(self._unit, size, low, high)
        return _finish(low + (high - low) * u, size, low, high)

    def _normals(self, n):
        m = (n + 1) // 2
        radius = np.sqrt(-2.0 * np.log(self._open_unit(m)))  # Box & Muller (1958)
        angle = 2.0 * math.pi * self._unit(m)
        return np.concatenate([radius * np.cos(angle), radius * np.sin(angle)])[:n]

    def standard_normal(self, size=None):
        """Standard normals (Box–Muller)."""
        return _finish(self._draw(self._normals, size), size)

    def normal(self, loc=0.0, scale=1.0, size=None):
        """Normals of mean ``loc`` and standard deviation ``scale``."""
        loc, scale = np.asarray(loc, dtype=float), np.asarray(scale, dtype=float)
        z = self._draw(self._normals, size, loc, scale)
        return _finish(loc + scale * z, size, loc, scale)

    def _laplaces(self, n):
        c = self._open_unit(n) - 0.5  # inverse CDF of the standard Laplace law
        return -np.sign(c) * np.log1p(-2.0 * np.abs(c))

    def laplace(self, loc=0.0, scale=1.0, size=None):
        """Laplace draws of location ``loc`` and scale ``scale`` (inverse CDF)."""
        loc, scale = np.asarray(loc, dtype=float), np.asarray(scale, dtype=float)
        z = self._draw(self._laplaces, size, loc, scale)
        return _finish(loc + scale * z, size, loc, scale)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        """Gumbel draws (inverse CDF, ``-ln(-ln v)``)."""
        loc, scale = np.asarray(loc, dtype=float), np.asarray(scale, dtype=float)
        z = self._draw(lambda n: -np.log(-np.log(self._open_unit(n))), size, loc, scale)
        return _finish(loc + scale * z, size, loc, scale)

    # -- discrete ---------------------------------------------------------
    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Uniform integers on [low, high) ([low, high] with ``endpoint``), unbiased."""
        if high is None:
            low, high = 0, low
        if np.ndim(low) == 0 and np.ndim(high) == 0 and 0 < int(high) + endpoint - int(low) \
                and int(high) + endpoint <= 2**63:
            return self._scalar_integers(int(low), int(high) + endpoint, size, dtype)
        low = np.asarray(low).astype(np.int64)
        high = np.asarray(high)
        high = high.astype(np.uint64) if np.all(high >= 0) else high.astype(np.int64)
        if endpoint:
            high = high + 1
        if not np.all(np.asarray(high).astype(object) > low.astype(object)):
            raise ValueError("high <= low")
        # The width as an unsigned 64-bit number (two's complement differences).
        width = np.asarray(high).astype(np.uint64) - low.astype(np.uint64)
        shape = _shape(size) if size is not None else np.broadcast_shapes(low.shape, width.shape)
        width = np.broadcast_to(width, shape).ravel()
        reject_below = (np.uint64(0) - width) % width  # 2^64 mod width (Lemire 2019)
        out = np.empty(width.size, dtype=np.uint64)
        todo = np.arange(width.size)
        while todo.size:
            w = self._words(todo.size)
            ok = w >= reject_below[todo]
            out[todo[ok]] = w[ok] % width[todo[ok]]
            todo = todo[~ok]
        values = (np.broadcast_to(low.astype(np.uint64), shape).ravel() + out).view(np.int64)
        values = values.reshape(shape).astype(dtype)
        if size is None and values.ndim == 0:
            return values[()]
        return values

    def _scalar_integers(self, low, high, size, dtype):
        """``integers`` for scalar bounds, ``high - low`` at most 2^63 (the fast path)."""
        width = high - low
        reject_below = np.uint64(2**64 % width)  # Lemire 2019, as above
        n = math.prod(_shape(size))
        out = self._words(n)
        bad = np.flatnonzero(out < reject_below)
        while bad.size:
            out = out.copy() if not out.flags.writeable else out
            out[bad] = self._words(bad.size)
            bad = bad[out[bad] < reject_below]
        values = ((out % np.uint64(width)).astype(np.int64) + low).astype(dtype)
        return values.reshape(_shape(size)) if size is not None else values[0]

    def permutation(self, x):
        """A uniformly random permutation of ``range(x)`` (an int) or of the rows of ``x``."""
        n = int(x) if np.ndim(x) == 0 else len(x)
        keys = self._words(n)
        while np.unique(keys).size < n:  # a tie (probability < n^2 / 2^65): draw again
            keys = self._words(n)
        order = np.argsort(keys, kind="stable")
        return order if np.ndim(x) == 0 else np.asarray(x)[order]

    def choice(self, a, size=None, replace=True, p=None):
        """Draws from ``range(a)`` (an int) or from the items of ``a``."""
        n = int(a) if np.ndim(a) == 0 else len(a)
        shape = _shape(size)
        m = math.prod(shape)
        if p is not None:
            if not replace:
                raise NotImplementedError("choice(replace=False, p=...) is not used by skdp.")
            cdf = np.cumsum(np.asarray(p, dtype=float))
            idx = np.searchsorted(cdf / cdf[-1], self._unit(m), side="right")
            idx = np.minimum(idx, n - 1)
        elif replace:
            idx = self.integers(0, n, size=m)
        else:
            if m > n:
                raise ValueError("Cannot take a larger sample than population when replace=False")
            if 2 * m > n:
                idx = self.permutation(n)[:m]
            else:
                idx = np.empty(0, dtype=np.int64)
                while idx.size < m:  # the first distinct values of uniform draws
                    drawn = np.concatenate([idx, self.integers(0, n, size=m - idx.size + 8)])
                    _, first = np.unique(drawn, return_index=True)
                    idx = drawn[np.sort(first)][:m]
        idx = idx.reshape(shape)
        out = idx if np.ndim(a) == 0 else np.asarray(a)[idx]
        return out[()] if size is None else out

    def binomial(self, n, p, size=None):
        """Binomial(n, p) draws: successes among ``n`` trials, found by geometric jumps.

        The gaps between successes are geometric, drawn by inverse CDF,
        ``floor(ln v / ln(1 - p)) + 1`` (Devroye 1986, X.2): O(np) uniforms
        per draw rather than n. For p > 1/2 it counts the failures.
        """
        n, p = int(n), float(p)
        if not 0.0 <= p <= 1.0 or n < 0:
            raise ValueError(f"binomial needs n >= 0 and p in [0, 1]; got n={n}, p={p}.")
        shape = _shape(size)
        counts = np.empty(math.prod(shape), dtype=np.int64)
        q = min(p, 1.0 - p)
        for i in range(counts.size):
            if q == 0.0 or n == 0:
                k = 0
            else:
                k, position, log_fail = 0, 0.0, math.log1p(-q)
                block = int(n * q + 4.0 * math.sqrt(n * q) + 16)
                while True:
                    gaps = np.floor(np.log(self._open_unit(block)) / log_fail) + 1.0
                    ends = position + np.cumsum(gaps)
                    inside = int(np.searchsorted(ends, n, side="right"))
                    k += inside
                    if inside < block:
                        break
                    position = float(ends[-1])
            counts[i] = k if q == p else n - k
        counts = counts.reshape(shape)
        return counts[()] if size is None else counts

    def poisson(self, lam=1.0, size=None):
        """Poisson(λ) draws: arrivals of a rate-1 Poisson process in [0, λ]."""
        lam = float(lam)
        shape = _shape(size)
        n = math.prod(shape)
        counts = np.zeros(n, dtype=np.int64)
        clock = np.zeros(n)
        live = np.arange(n)
        while live.size:
            clock[live] -= np.log(self._open_unit(live.size))
            arrived = clock[live] <= lam
            counts[live[arrived]] += 1
            live = live[arrived]
        counts = counts.reshape(shape)
        return counts[()] if size is None else counts
