"""The distributions of ``autodiff.random``: uniform, normal (Box–Muller) and truncated
normal, the one-line inversions (exponential, Laplace, logistic, Gumbel, Cauchy, ...),
the gamma family (Marsaglia–Tsang, exact by rejection in a ``while_loop``, differentiable
in the shape by implicit reparameterization), discrete draws (Bernoulli, categorical,
``randint``, permutations, Poisson, binomial, multinomial) and the multivariate ones.

``dgamma_cdf_da`` (not part of the API) is ∂P(a, z)/∂a of the regularized lower incomplete
gamma function, which ``lax.igamma_grad_a`` names too.

>>> import numpy as np, autodiff as ad
>>> x = ad.random.gamma(ad.random.key(0), 2.0, (10000,))
>>> round(float(x.mean()), 1)
2.0
"""
import builtins
import math

import numpy as np

from . import primitives as P
from . import numpy as anp
from ._lax_control_flow import while_loop
from .custom_derivatives import custom_jvp
from .errors import ShapeError, DTypeError
from .core import user_source
from .scipy.special import digamma, gammaln, log_ndtr
from ._random_keys import (check_method, split, fold_in, check_key, as_shape, as_dtype,
                           float_dtype, param_shape,
                           random_words, unit_uniform, open_unit_uniform)

__all__ = ["uniform", "normal", "truncated_normal", "bernoulli", "categorical", "randint",
           "permutation", "choice", "gamma", "loggamma", "beta", "dirichlet", "poisson",
           "exponential", "laplace", "logistic", "gumbel", "cauchy", "t", "chisquare",
           "rademacher", "pareto", "weibull_min", "lognormal", "multivariate_normal",
           "orthogonal", "geometric", "rayleigh", "maxwell", "triangular",
           "generalized_normal", "ball", "binomial", "multinomial", "wald", "f",
           "double_sided_maxwell"]


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform on ``[minval, maxval)``; ``minval``/``maxval`` may be arrays (broadcast)
    and are differentiable.

    >>> import numpy as np, autodiff as ad
    >>> u = ad.random.uniform(ad.random.key(0), (10000,), minval=2.0, maxval=4.0)
    >>> bool(2.0 <= u.min() and u.max() < 4.0), round(float(u.mean()), 1)
    (True, 3.0)
    """
    dt = float_dtype(dtype, "uniform")
    shape = param_shape(as_shape(shape), minval, maxval)
    u = unit_uniform(key, shape, dt, "uniform")
    lo, hi = anp.asarray(minval, dtype=dt), anp.asarray(maxval, dtype=dt)
    return anp.maximum(lo, anp.add(anp.multiply(u, anp.subtract(hi, lo)), lo))

# ----------------------------------------------------------------------------
# continuous distributions
# ----------------------------------------------------------------------------

def normal(key, shape=(), dtype=None):
    """Standard normal (Box–Muller on two 53-bit uniforms, computed in float64); a complex
    ``dtype`` gives independent N(0, 1/2) real and imaginary parts.

    >>> import numpy as np, autodiff as ad
    >>> z = ad.random.normal(ad.random.key(0), (20000,))
    >>> abs(float(z.mean())) < 0.03, abs(float(z.std()) - 1) < 0.02
    (True, True)
    """
    shape = as_shape(shape)
    cdt = as_dtype(dtype)
    if cdt.kind == "c":
        # complex: real and imaginary parts independent N(0, 1/2), so E|z|² = 1 (as JAX)
        part = np.dtype(np.float32) if cdt == np.dtype(np.complex64) else np.dtype(np.float64)
        kr, ki = split(check_key(key, "normal"))
        s = np.sqrt(0.5)
        re = anp.multiply(_normal(kr, shape, part, "normal"), part.type(s))
        im = anp.multiply(_normal(ki, shape, part, "normal"), part.type(s))
        return anp.astype(anp.add(re, anp.multiply(im, cdt.type(1j))), cdt)
    dt = float_dtype(dtype, "normal")
    return _normal(key, shape, dt, "normal")


def _normal(key, shape, dt, who):
    n = builtins.int(np.prod(shape, dtype=np.int64))
    m = (n + 1) // 2
    f64 = np.dtype(np.float64)
    u = open_unit_uniform(key, (2 * m,), f64, who)
    r = anp.sqrt(anp.multiply(-2.0, anp.log(P.slice_in_dim(u, 0, m, 0))))
    th = anp.multiply(2 * math.pi, P.slice_in_dim(u, m, 2 * m, 0))
    z = P.concatenate([anp.multiply(r, anp.cos(th)), anp.multiply(r, anp.sin(th))], 0)
    z = P.slice_in_dim(z, 0, n, 0) if 2 * m != n else z
    return P.reshape(P.convert(z, dt), shape)


def _ndtri_lower(logu):
    """Φ⁻¹(u) for u ≤ 1/2, given log u: Abramowitz–Stegun 26.2.23 as the start, then Newton
    steps on log Φ(z) = log u (quadratic convergence: 4.5e-4 → 1e-7 → 1e-14 → exact).
    The last step is taken from a stopped iterate, so the derivative is the implicit one,
    dz/du = 1/φ(z), not the unrolled iterations'."""
    t = anp.sqrt(anp.multiply(-2.0, logu))
    num = anp.add(2.515517, anp.multiply(t, anp.add(0.802853, anp.multiply(t, 0.010328))))
    den = anp.add(1.0, anp.multiply(t, anp.add(1.432788, anp.multiply(
        t, anp.add(0.189269, anp.multiply(t, 0.001308))))))
    z = anp.stop_gradient(anp.negative(anp.subtract(t, anp.divide(num, den))))
    lu = anp.stop_gradient(logu)

    def step(z, lu):
        lphi = log_ndtr(z)
        # d log Φ / dz = φ / Φ = exp(log φ - log Φ)
        slope = anp.exp(anp.subtract(anp.subtract(anp.multiply(-0.5, anp.multiply(z, z)),
                                                  0.5 * math.log(2 * math.pi)), lphi))
        return anp.subtract(z, anp.divide(anp.subtract(lphi, lu), slope))
    for _ in range(3):
        z = step(z, lu)
    return step(anp.stop_gradient(z), logu)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal conditioned on ``lower < z < upper`` (inverse CDF, accurate in the
    tails: the side of the interval nearer to −∞ is sampled and reflected).

    >>> import numpy as np, autodiff as ad
    >>> z = ad.random.truncated_normal(ad.random.key(0), 4.0, 6.0, (1000,))
    >>> bool(np.all((z > 4.0) & (z < 6.0)))
    True
    """
    dt = float_dtype(dtype, "truncated_normal")
    shape = param_shape(shape, lower, upper)
    f64 = np.dtype(np.float64)
    lo, hi = anp.asarray(lower, dtype=f64), anp.asarray(upper, dtype=f64)
    flip = anp.greater(anp.add(lo, hi), 0.0)          # sample -z on (-hi, -lo) instead
    a = anp.where(flip, anp.negative(hi), lo)
    b = anp.where(flip, anp.negative(lo), hi)
    # Φ(±40) is 0 or 1 to double precision; clamping also keeps log_ndtr away from ±inf
    la, lb = log_ndtr(anp.clip(a, -40.0, 40.0)), log_ndtr(anp.clip(b, -40.0, 40.0))
    u = open_unit_uniform(key, shape, f64, "truncated_normal")
    # log(Φ(a) + u (Φ(b) - Φ(a))) = lb + log(u + (1 - u) exp(la - lb))
    logu = anp.add(lb, anp.log(anp.add(u, anp.multiply(anp.subtract(1.0, u), anp.exp(anp.subtract(la, lb))))))
    # Φ⁻¹ for u > 1/2 by symmetry, -Φ⁻¹(1 - u): one inversion of the lower-half argument
    upper_half = anp.greater(logu, math.log(0.5))
    lq = anp.maximum(anp.log1p(anp.negative(anp.exp(logu))), -700.0)
    z0 = _ndtri_lower(anp.where(upper_half, lq, logu))
    z = anp.where(upper_half, anp.negative(z0), z0)
    z = anp.clip(z, a, b)
    z = anp.where(flip, anp.negative(z), z)
    return anp.astype(anp.broadcast_to(z, shape), dt)


def exponential(key, shape=(), dtype=None):
    """Exponential with rate 1: ``-log(1 - u)``."""
    dt = float_dtype(dtype, "exponential")
    u = unit_uniform(key, as_shape(shape), dt, "exponential")
    return anp.negative(anp.log1p(anp.negative(u)))


def laplace(key, shape=(), dtype=None):
    """Laplace with location 0, scale 1."""
    dt = float_dtype(dtype, "laplace")
    u = anp.subtract(anp.multiply(2.0, open_unit_uniform(key, as_shape(shape), dt, "laplace")), 1.0)
    return anp.multiply(anp.negative(anp.sign(u)), anp.log1p(anp.negative(anp.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Standard logistic: ``log(u) - log(1 - u)``."""
    dt = float_dtype(dtype, "logistic")
    u = open_unit_uniform(key, as_shape(shape), dt, "logistic")
    return anp.subtract(anp.log(u), anp.log1p(anp.negative(u)))


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel: ``-log(-log(u))`` (``mode``: JAX's ``"low"``/``"high"``/
    ``"highest"`` precision switch, accepted; the uniform has the dtype's full mantissa).

    >>> import autodiff as ad
    >>> g = ad.random.gumbel(ad.random.key(0), (20000,))
    >>> abs(float(g.mean()) - 0.5772) < 0.03
    True
    """
    if mode not in (None, "low", "high", "highest"):
        raise ValueError(f"ad.random.gumbel: mode must be 'low', 'high' or 'highest', "
                         f"got {mode!r}")
    dt = float_dtype(dtype, "gumbel")
    u = open_unit_uniform(key, as_shape(shape), dt, "gumbel")
    return anp.negative(anp.log(anp.negative(anp.log(u))))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy: ``tan(π (u - 1/2))``."""
    dt = float_dtype(dtype, "cauchy")
    u = open_unit_uniform(key, as_shape(shape), dt, "cauchy")
    return anp.tan(anp.multiply(np.pi, anp.subtract(u, 0.5)))


def pareto(key, b, shape=None, dtype=None):
    """Pareto with shape ``b`` on ``[1, ∞)``: ``exp(E / b)``, E exponential."""
    dt = float_dtype(dtype, "pareto")
    shape = param_shape(shape, b)
    return anp.exp(anp.divide(exponential(key, shape, dt), anp.asarray(b, dtype=dt)))


def weibull_min(key, scale, concentration, shape=None, dtype=None):
    """Weibull: ``scale · E^(1/concentration)``, E exponential."""
    dt = float_dtype(dtype, "weibull_min")
    shape = param_shape(shape, scale, concentration)
    e = exponential(key, shape, dt)
    return anp.multiply(scale, anp.power(e, anp.divide(1.0, anp.asarray(concentration, dtype=dt))))


def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """``exp(sigma · z)``, z standard normal."""
    dt = float_dtype(dtype, "lognormal")
    shape = param_shape(shape, sigma)
    return anp.exp(anp.multiply(anp.asarray(sigma, dtype=dt), _normal(key, shape, dt, "lognormal")))


def rademacher(key, shape=(), dtype=np.int64):
    """±1 with probability 1/2 each."""
    b = bernoulli(key, 0.5, as_shape(shape))
    return anp.astype(anp.subtract(anp.multiply(2, anp.astype(b, np.int64)), 1), as_dtype(dtype))


# ----------------------------------------------------------------------------
# gamma and friends: Marsaglia–Tsang with implicit reparameterization
# ----------------------------------------------------------------------------

def _rejection(propose, key, shape):
    """Exact rejection sampling, vectorized: ``propose(key, shape) -> (values, ok)`` is
    called once per round of a ``while_loop`` (a fresh key each round), and each value
    keeps the first proposal accepted for it; the loop ends when every value has one
    (rounds ≈ log n / log(1/rejection rate): 5 or 6 for 10⁶ gamma draws). One proposal in
    the IR keeps the compiled program small; the loop jits and vmaps."""

    def cond(c):
        return anp.logical_not(anp.all(c[1]))

    def body(c):
        out, done, r = c
        v, ok = propose(fold_in(key, r), shape)
        new = anp.logical_and(anp.logical_not(done), ok)
        return anp.where(new, v, out), anp.logical_or(done, ok), anp.add(r, np.uint32(1))

    init = (anp.zeros(shape), anp.zeros(shape, dtype=bool), np.uint32(0))
    out, _, _ = while_loop(cond, body, init)
    return out


def _gamma_mt(key, a, shape):
    """Gamma(a) for a ≥ 1 (Marsaglia & Tsang 2000: acceptance ≥ 0.951)."""
    f64 = np.dtype(np.float64)
    d = anp.subtract(a, 1.0 / 3.0)
    c = anp.divide(1.0 / 3.0, anp.sqrt(d))

    def propose(k, kshape):
        kz, ku = split(k)
        x = _normal(kz, kshape, f64, "gamma")
        u = open_unit_uniform(ku, kshape, f64, "gamma")
        v = anp.add(1.0, anp.multiply(c, x))
        v3 = anp.multiply(v, anp.multiply(v, v))
        # accept iff v > 0 and log u < x²/2 + d (1 - v³ + log v³)
        logv3 = anp.log(anp.where(anp.greater(v3, 0.0), v3, 1.0))
        ok = anp.logical_and(anp.greater(v, 0.0), anp.less(anp.log(u), anp.add(
            anp.multiply(0.5, anp.multiply(x, x)),
            anp.multiply(d, anp.add(anp.subtract(1.0, v3), logv3)))))
        return anp.multiply(d, v3), ok
    return _rejection(propose, key, shape)


def dgamma_cdf_da(a, z):
    """∂/∂a of the regularized lower incomplete gamma P(a, z), by its series
    P = Σₙ zᵃ⁺ⁿ e⁻ᶻ / Γ(a+n+1), each term's derivative being term·(log z − ψ(a+n+1)),
    summed until the terms are negligible (a while_loop, so it vmaps and jits)."""
    logz = anp.log(z)
    t0 = anp.exp(anp.subtract(anp.subtract(anp.multiply(a, logz), z), gammaln(anp.add(a, 1.0))))
    psi0 = digamma(anp.add(a, 1.0))

    def cond(c):
        n, t, _, s, _ = c
        # past the largest term (a + n ≥ z) the terms fall geometrically: stop at 1e-17·sum
        going = anp.logical_or(anp.less(anp.add(a, n), z), anp.greater(t, anp.multiply(1e-17, s)))
        return anp.logical_and(anp.less(n, 100000.0), anp.any(going))

    def body(c):
        n, t, psi, s, ds = c
        s = anp.add(s, t)
        ds = anp.add(ds, anp.multiply(t, anp.subtract(logz, psi)))
        n1 = anp.add(n, 1.0)
        t = anp.multiply(t, anp.divide(z, anp.add(a, n1)))
        psi = anp.add(psi, anp.divide(1.0, anp.add(a, n1)))
        return n1, t, psi, s, ds

    zero = anp.zeros_like(t0)
    init = (np.float64(0.0), t0, psi0, zero, zero)
    _, _, _, _, ds = while_loop(cond, body, init)
    return ds


@custom_jvp
def _implicit_gamma(a, z):
    return z


@_implicit_gamma.defjvp
def _implicit_gamma_jvp(primals, tangents):
    # implicit reparameterization (Figurnov et al. 2018): F(z; a) = u fixed, so
    # dz/da = -(∂F/∂a) / f(z; a), f the Gamma(a) density
    a, z = primals
    ta, _ = tangents
    a_s, z_s = anp.stop_gradient(a), anp.stop_gradient(z)
    logpdf = anp.subtract(anp.subtract(anp.multiply(anp.subtract(a_s, 1.0), anp.log(z_s)), z_s), gammaln(a_s))
    dzda = anp.negative(anp.divide(dgamma_cdf_da(a_s, z_s), anp.exp(logpdf)))
    return z, anp.multiply(dzda, ta)


def gamma(key, a, shape=None, dtype=None, method="exact"):
    """Gamma(a, 1), differentiable in ``a`` by implicit reparameterization
    (dz/da = −∂ₐF(z; a) / f(z; a)), as in JAX. For ``a < 1`` the Gamma(a + 1) draw is
    boosted by ``u^(1/a)``. ``method``: ``"exact"`` or ``"approximate"`` (JAX's names; both
    draw this exact sampler here).

    >>> import numpy as np, autodiff as ad
    >>> z = ad.random.gamma(ad.random.key(0), 3.0, (20000,))
    >>> abs(float(z.mean()) - 3.0) < 0.05
    True
    """
    check_method(method, "gamma")
    dt = float_dtype(dtype, "gamma")
    shape = param_shape(shape, a)
    f64 = np.dtype(np.float64)
    a = anp.broadcast_to(anp.asarray(a, dtype=f64), shape)
    kg, kb = split(check_key(key, "gamma"))
    a_s = anp.stop_gradient(a)
    small = anp.less(a_s, 1.0)
    a1 = anp.where(small, anp.add(a_s, 1.0), a_s)
    z = _gamma_mt(kg, anp.stop_gradient(a1), shape)
    # boost: Gamma(a) = Gamma(a + 1) · u^(1/a)
    lu = anp.log(open_unit_uniform(kb, shape, f64, "gamma"))
    boost = anp.exp(anp.divide(lu, anp.where(small, a_s, 1.0)))
    z = anp.where(small, anp.multiply(z, boost), z)
    z = anp.maximum(z, np.finfo(dt).tiny)
    return anp.astype(_implicit_gamma(a, anp.stop_gradient(z)), dt)


def loggamma(key, a, shape=None, dtype=None, method="exact"):
    """``log`` of a Gamma(a) draw (computed as ``log gamma``; small ``a`` underflows to
    ``log(tiny)`` as in float arithmetic); ``method`` as for :func:`gamma`.

    >>> import numpy as np, autodiff as ad
    >>> k = ad.random.key(0)
    >>> bool(np.allclose(np.exp(ad.random.loggamma(k, 2.0, (3,))), ad.random.gamma(k, 2.0, (3,))))
    True
    """
    check_method(method, "loggamma")
    return anp.log(gamma(key, a, shape, dtype))


def chisquare(key, df, shape=None, dtype=None, method="exact"):
    """Chi-square with ``df`` degrees of freedom: ``2 · Gamma(df / 2)``; ``method`` as for
    :func:`gamma`.

    >>> import autodiff as ad
    >>> x = ad.random.chisquare(ad.random.key(0), 4.0, (20000,))
    >>> abs(float(x.mean()) - 4.0) < 0.1
    True
    """
    check_method(method, "chisquare")
    return anp.multiply(2.0, gamma(key, anp.divide(df, 2.0), shape, dtype))


def beta(key, a, b, shape=None, dtype=None, method="exact"):
    """Beta(a, b) = X / (X + Y), X ~ Gamma(a), Y ~ Gamma(b); differentiable in a and b
    (through the gamma draws' implicit gradients); ``method`` as for :func:`gamma`.

    >>> import autodiff as ad
    >>> x = ad.random.beta(ad.random.key(0), 2.0, 6.0, (20000,))
    >>> abs(float(x.mean()) - 0.25) < 0.01
    True
    """
    check_method(method, "beta")
    dt = float_dtype(dtype, "beta")
    shape = param_shape(shape, a, b)
    ka, kb = split(check_key(key, "beta"))
    x = gamma(ka, a, shape, np.float64)
    y = gamma(kb, b, shape, np.float64)
    return anp.astype(anp.divide(x, anp.add(x, y)), dt)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) over the last axis: normalized Gamma(alpha_i) draws."""
    dt = float_dtype(dtype, "dirichlet")
    alpha = anp.asarray(alpha)
    ashape = tuple(anp.shape(alpha))
    if not ashape:
        raise ShapeError("ad.random.dirichlet: alpha needs at least one axis (the categories)",
                         source=user_source())
    batch = param_shape(None if shape is None else as_shape(shape), anp.zeros(ashape[:-1]))
    g = gamma(key, alpha, batch + ashape[-1:], np.float64)
    return anp.astype(anp.divide(g, anp.sum(g, axis=-1, keepdims=True)), dt)


def t(key, df, shape=None, dtype=None):
    """Student's t with ``df`` degrees of freedom: ``z / sqrt(V / df)``, V ~ chi-square."""
    dt = float_dtype(dtype, "t")
    shape = param_shape(shape, df)
    kn, kg = split(check_key(key, "t"))
    z = _normal(kn, shape, np.dtype(np.float64), "t")
    v = chisquare(kg, df, shape, np.float64)
    return anp.astype(anp.divide(z, anp.sqrt(anp.divide(v, df))), dt)


# ----------------------------------------------------------------------------
# discrete distributions
# ----------------------------------------------------------------------------

def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans, true with probability ``p`` (compared with a 53-bit uniform, so ``mode``,
    JAX's ``"low"``/``"high"`` precision switch, is accepted and changes nothing).

    >>> import autodiff as ad
    >>> b = ad.random.bernoulli(ad.random.key(0), 0.3, (20000,))
    >>> abs(float(b.mean()) - 0.3) < 0.02
    True
    """
    if mode not in ("low", "high"):
        raise ValueError(f"ad.random.bernoulli: mode must be 'low' or 'high', got {mode!r}")
    shape = param_shape(shape, p)
    return anp.less(unit_uniform(key, shape, np.dtype(np.float64), "bernoulli"), p)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn with probabilities ``softmax(logits, axis)`` (Gumbel-max).

    ``shape`` is the result's shape: the batch shape of ``logits`` (its shape without
    ``axis``) must broadcast to it, as in JAX. ``replace=False`` (JAX's) draws without
    replacement along the leading axes ``shape`` adds to the batch shape (Gumbel-top-k:
    for each batch element, ``prod(shape[:-len(batch)])`` distinct categories). ``mode``
    is accepted and ignored.

    >>> import numpy as np, autodiff as ad
    >>> draw = ad.random.categorical(ad.random.key(0), np.zeros(4), shape=(4,),
    ...                              replace=False)
    >>> sorted(draw.tolist())
    [0, 1, 2, 3]
    """
    del mode
    logits = anp.asarray(logits)
    ls = tuple(anp.shape(logits))
    ax = axis % len(ls)
    batch = ls[:ax] + ls[ax + 1:]
    shape = param_shape(shape, np.zeros(batch))
    l = anp.moveaxis(logits, ax, -1)
    if not replace:
        if tuple(shape[len(shape) - len(batch):]) != batch:
            raise ValueError(f"ad.random.categorical: with replace=False the shape {shape} "
                             f"must end with the batch shape of logits {batch}")
        prefix = shape[:len(shape) - len(batch)]
        k = builtins.int(np.prod(prefix, dtype=np.int64))
        if k > ls[ax]:
            raise ValueError(f"ad.random.categorical: cannot draw {k} distinct categories "
                             f"out of {ls[ax]} without replacement")
        g = gumbel(key, batch + ls[ax:ax + 1], np.float64)
        order = anp.argsort(anp.negative(anp.add(anp.stop_gradient(l), g)), axis=-1)
        top = order[..., :k]                              # (*batch, k)
        return anp.reshape(anp.moveaxis(top, -1, 0), shape)
    g = gumbel(key, shape + ls[ax:ax + 1], np.float64)
    return anp.argmax(anp.add(anp.stop_gradient(l), g), axis=-1)


def randint(key, shape, minval, maxval, dtype=np.int64):
    """Integers uniform on ``[minval, maxval)`` (64 random bits per value, so the modulo
    bias is below 2⁻³²). ``minval``/``maxval`` may be arrays or traced."""
    shape = param_shape(as_shape(shape), minval, maxval)
    dt = as_dtype(dtype)
    if dt.kind not in "iu":
        raise DTypeError(f"ad.random.randint: dtype must be an integer type, got {dt}",
                         source=user_source())
    n = builtins.int(np.prod(shape, dtype=np.int64))
    w = random_words(key, 2 * n, "randint")
    u64 = np.dtype(np.uint64)
    r = P.add(P.mul(P.convert(P.slice_in_dim(w, 0, n, 0), u64), np.uint64(1 << 32)),
              P.convert(P.slice_in_dim(w, n, 2 * n, 0), u64))
    r = anp.reshape(r, shape)
    lo = anp.broadcast_to(anp.astype(minval, np.int64), shape)
    hi = anp.broadcast_to(anp.astype(maxval, np.int64), shape)
    span = anp.astype(anp.maximum(anp.subtract(hi, lo), 1), u64)
    return anp.astype(anp.add(lo, anp.astype(P.mod_p.bind(r, span), np.int64)), dt)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``range(x)`` (integer ``x``) or of ``x`` along ``axis``
    (``independent=True``: each slice along ``axis`` permuted on its own).

    >>> import numpy as np, autodiff as ad
    >>> p = ad.random.permutation(ad.random.key(0), 5)
    >>> sorted(p.tolist())
    [0, 1, 2, 3, 4]
    """
    if isinstance(x, (int, np.integer)):
        return _perm_indices(key, builtins.int(x))
    x = anp.asarray(x)
    sh = tuple(anp.shape(x))
    if not sh:
        raise ShapeError("ad.random.permutation: x must be an integer or an array with at "
                         "least one axis", source=user_source())
    ax = axis % len(sh)
    if independent:
        u = unit_uniform(key, sh, np.dtype(np.float64), "permutation")
        return anp.take_along_axis(x, anp.argsort(u, axis=ax), axis=ax)
    return anp.take(x, _perm_indices(key, sh[ax]), axis=ax)


def _perm_indices(key, n):
    # sorting 53-bit uniforms: ties have probability below n²/2⁵⁴
    return anp.argsort(unit_uniform(key, (n,), np.dtype(np.float64), "permutation"))


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Draws from ``a`` (an integer n means ``arange(n)``) along ``axis``, with or without
    replacement, uniformly or with probabilities ``p`` (without replacement: Gumbel-top-k).
``mode`` is JAX's precision switch of the Gumbel draws, accepted (they are full-precision).

    >>> import numpy as np, autodiff as ad
    >>> c = ad.random.choice(ad.random.key(0), 10, (10,), replace=False)
    >>> sorted(c.tolist()) == list(range(10))
    True
    """
    if not isinstance(shape, (tuple, list)):
        raise TypeError("ad.random.choice: the shape argument must be a sequence (a tuple "
                        f"such as (k,)), got {shape!r}")
    shape = as_shape(shape)
    if isinstance(a, (int, np.integer)):
        n, arr = builtins.int(a), None
    else:
        arr = anp.asarray(a)
        n = tuple(anp.shape(arr))[axis]
    k = builtins.int(np.prod(shape, dtype=np.int64))
    if not replace and k > n:
        raise ValueError(f"ad.random.choice: cannot take a larger sample ({k}) than the "
                         f"population ({n}) when replace=False")
    if p is None:
        idx = randint(key, (k,), 0, n) if replace else P.slice_in_dim(_perm_indices(key, n), 0, k, 0)
    else:
        logp = anp.log(anp.asarray(p, dtype=np.float64))
        if replace:
            idx = categorical(key, logp, shape=(k,))
        else:
            g = anp.add(logp, gumbel(key, (n,), np.float64))
            idx = P.slice_in_dim(anp.argsort(anp.negative(g)), 0, k, 0)
    idx = anp.reshape(idx, shape)
    if arr is None:
        return idx
    return anp.take(arr, idx, axis=axis)


def poisson(key, lam, shape=None, dtype=np.int64, method="exact"):
    """Poisson(lam): inversion by sequential search for ``lam < 10``, Hörmann's transformed
    rejection (PTRS, 1993) for larger ``lam``, as in JAX/numpy; ``lam < 0`` or NaN gives
    -1. ``method``: ``"exact"`` or ``"approximate"`` (both this exact sampler).

    >>> import numpy as np, autodiff as ad
    >>> k = ad.random.poisson(ad.random.key(0), 3.0, (20000,))
    >>> abs(float(k.mean()) - 3.0) < 0.05
    True
    """
    check_method(method, "poisson")
    shape = param_shape(shape, lam)
    f64 = np.dtype(np.float64)
    lam = anp.broadcast_to(anp.asarray(lam, dtype=f64), shape)
    ks, kr = split(check_key(key, "poisson"))
    # lam < 0 or NaN gives -1 (as in JAX); such entries take the (finite) inversion path
    valid = anp.greater_equal(lam, 0.0)
    small = anp.logical_or(anp.less(lam, 10.0), anp.logical_not(valid))
    # inversion: the first k with F(k) > u; F accumulates p_k = p_{k-1} λ / k
    ls = anp.where(anp.logical_and(small, valid), lam, 0.0)
    u = unit_uniform(ks, shape, f64, "poisson")

    def cond(c):
        k, pk, cdf, _ = c
        return anp.logical_and(anp.less(k, 200.0), anp.any(anp.logical_and(small, anp.less_equal(cdf, u))))

    def body(c):
        k, pk, cdf, out = c
        done = anp.logical_or(anp.logical_not(small), anp.greater(cdf, u))
        k1 = anp.add(k, 1.0)
        pk1 = anp.multiply(pk, anp.divide(ls, k1))
        out = anp.where(done, out, anp.add(out, 1.0))
        return k1, pk1, anp.where(done, cdf, anp.add(cdf, pk1)), out
    p0 = anp.exp(anp.negative(ls))
    _, _, _, k_small = while_loop(cond, body, (np.float64(0.0), p0, p0, anp.zeros_like(ls)))

    # PTRS (acceptance ≥ 0.89 for λ ≥ 10)
    lb = anp.where(small, 10.0, lam)
    slam, loglam = anp.sqrt(lb), anp.log(lb)
    b = anp.add(0.931, anp.multiply(2.53, slam))
    a = anp.add(-0.059, anp.multiply(0.02483, b))
    inv_alpha = anp.add(1.1239, anp.divide(1.1328, anp.subtract(b, 3.4)))
    vr = anp.subtract(0.9277, anp.divide(3.6224, anp.subtract(b, 2.0)))

    def propose(key, kshape):
        ku, kv = split(key)
        U = anp.subtract(unit_uniform(ku, kshape, f64, "poisson"), 0.5)
        V = open_unit_uniform(kv, kshape, f64, "poisson")
        us = anp.subtract(0.5, anp.abs(U))
        k = anp.floor(anp.add(anp.multiply(anp.add(anp.divide(anp.multiply(2.0, a), us), b), U),
                              anp.add(lb, 0.43)))
        fast = anp.logical_and(anp.greater_equal(us, 0.07), anp.less_equal(V, vr))
        bad = anp.logical_or(anp.less(k, 0.0), anp.logical_and(anp.less(us, 0.013), anp.greater(V, us)))
        lhs = anp.add(anp.add(anp.log(V), anp.log(inv_alpha)),
                      anp.negative(anp.log(anp.add(anp.divide(a, anp.multiply(us, us)), b))))
        rhs = anp.subtract(anp.subtract(anp.multiply(k, loglam), lb),
                           gammaln(anp.add(anp.maximum(k, 0.0), 1.0)))
        ok = anp.logical_or(fast, anp.logical_and(anp.logical_not(bad), anp.less_equal(lhs, rhs)))
        return k, ok
    k_big = _rejection(propose, kr, shape)
    out = anp.where(valid, anp.where(small, k_small, k_big), -1.0)
    return anp.astype(out, as_dtype(dtype))


# ----------------------------------------------------------------------------
# multivariate
# ----------------------------------------------------------------------------

def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Normal with mean ``mean[..., n]`` and covariance ``cov[..., n, n]``:
    ``mean + L z`` with ``L Lᵀ = cov`` (``method``: ``"cholesky"``, ``"eigh"`` or
    ``"svd"``); differentiable in ``mean`` and ``cov``.

    >>> import numpy as np, autodiff as ad
    >>> c = np.array([[2.0, 0.6], [0.6, 1.0]])
    >>> x = ad.random.multivariate_normal(ad.random.key(0), np.zeros(2), c, (40000,))
    >>> bool(np.allclose(np.cov(x.T), c, atol=0.05))
    True
    """
    dt = float_dtype(dtype, "multivariate_normal")
    mean, cov = anp.asarray(mean, dtype=dt), anp.asarray(cov, dtype=dt)
    ms, cs = tuple(anp.shape(mean)), tuple(anp.shape(cov))
    if not ms or cs[-2:] != (ms[-1], ms[-1]):
        raise ShapeError(f"ad.random.multivariate_normal: mean[..., n] and cov[..., n, n] "
                         f"expected, got {ms} and {cs}", source=user_source())
    n = ms[-1]
    batch = param_shape(None if shape is None else as_shape(shape), np.zeros(ms[:-1]), np.zeros(cs[:-2]))
    if method == "cholesky":
        factor = anp.linalg.cholesky(cov)
    elif method == "eigh":
        w, v = anp.linalg.eigh(cov)
        factor = anp.multiply(v, anp.expand_dims(anp.sqrt(anp.maximum(w, 0.0)), -2))
    elif method == "svd":
        u_, s, _ = anp.linalg.svd(cov)
        factor = anp.multiply(u_, anp.expand_dims(anp.sqrt(s), -2))
    else:
        raise ValueError(f"ad.random.multivariate_normal: method must be 'cholesky', 'eigh' or "
                         f"'svd', got {method!r}")
    z = _normal(key, batch + (n,), dt, "multivariate_normal")
    return anp.add(mean, anp.squeeze(anp.matmul(factor, anp.expand_dims(z, -1)), -1))


def orthogonal(key, n, shape=(), dtype=None):
    """A Haar-distributed random orthogonal ``n × n`` matrix (QR of a Gaussian matrix with
    the signs of R's diagonal moved into Q; Mezzadri 2007)."""
    dt = float_dtype(dtype, "orthogonal")
    shape = as_shape(shape)
    z = _normal(key, shape + (n, n), dt, "orthogonal")
    q, r = anp.linalg.qr(z)
    d = anp.diagonal(r, axis1=-2, axis2=-1)
    return anp.multiply(q, anp.expand_dims(anp.where(anp.less(d, 0), -1.0, 1.0), -2))


# ----------------------------------------------------------------------------
# more distributions
# ----------------------------------------------------------------------------

def geometric(key, p, shape=None, dtype=np.int64):
    """Trials until the first success (support 1, 2, ...): ``ceil(log u / log(1 - p))``."""
    shape = param_shape(shape, p)
    u = open_unit_uniform(key, shape, np.dtype(np.float64), "geometric")
    k = anp.ceil(anp.divide(anp.log(u), anp.log1p(anp.negative(p))))
    return anp.astype(anp.maximum(k, 1.0), as_dtype(dtype))


def rayleigh(key, scale=1.0, shape=None, dtype=None):
    """Rayleigh: ``scale · sqrt(-2 log u)``."""
    dt = float_dtype(dtype, "rayleigh")
    shape = param_shape(shape, scale)
    u = open_unit_uniform(key, shape, dt, "rayleigh")
    return anp.multiply(anp.asarray(scale, dtype=dt), anp.sqrt(anp.multiply(-2.0, anp.log(u))))


def maxwell(key, shape=(), dtype=None):
    """Maxwell–Boltzmann (scale 1): the length of a standard normal 3-vector."""
    dt = float_dtype(dtype, "maxwell")
    z = _normal(key, as_shape(shape) + (3,), dt, "maxwell")
    return anp.sqrt(anp.sum(anp.multiply(z, z), axis=-1))


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular on ``[left, right]`` with peak ``mode`` (inverse CDF)."""
    dt = float_dtype(dtype, "triangular")
    shape = param_shape(shape, left, mode, right)
    a, c, b = (anp.asarray(v, dtype=dt) for v in (left, mode, right))
    u = unit_uniform(key, shape, dt, "triangular")
    fc = anp.divide(anp.subtract(c, a), anp.subtract(b, a))
    lo = anp.add(a, anp.sqrt(anp.multiply(u, anp.multiply(anp.subtract(b, a), anp.subtract(c, a)))))
    hi = anp.subtract(b, anp.sqrt(anp.multiply(anp.subtract(1.0, u),
                                               anp.multiply(anp.subtract(b, a), anp.subtract(b, c)))))
    return anp.where(anp.less(u, fc), lo, hi)


def generalized_normal(key, p, shape=(), dtype=None):
    """Density ∝ exp(-|x|ᵖ): ``sign · G^(1/p)``, G ~ Gamma(1/p) (p = 2 is N(0, 1/2))."""
    dt = float_dtype(dtype, "generalized_normal")
    shape = param_shape(as_shape(shape), p)
    kg, ks = split(check_key(key, "generalized_normal"))
    g = gamma(kg, anp.divide(1.0, p), shape, np.float64)
    sgn = anp.subtract(anp.multiply(2.0, anp.astype(bernoulli(ks, 0.5, shape), np.float64)), 1.0)
    return anp.astype(anp.multiply(sgn, anp.power(g, anp.divide(1.0, p))), dt)


def ball(key, d, p=2, shape=(), dtype=None):
    """Uniform in the d-dimensional unit ℓᵖ ball (Barthe et al. 2005: generalized normals
    divided by their norm, times u^(1/d)).

    >>> import numpy as np, autodiff as ad
    >>> x = ad.random.ball(ad.random.key(0), 3, shape=(1000,))
    >>> x.shape, bool(np.all(np.linalg.norm(x, axis=-1) <= 1))
    ((1000, 3), True)
    """
    dt = float_dtype(dtype, "ball")
    shape = as_shape(shape)
    kg, ke = split(check_key(key, "ball"))
    g = generalized_normal(kg, float(p), shape + (d,), np.float64)
    e = exponential(ke, shape, np.float64)
    norm = anp.power(anp.add(anp.sum(anp.power(anp.abs(g), p), axis=-1), e), 1.0 / p)
    return anp.astype(anp.divide(g, anp.expand_dims(norm, -1)), dt)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """``loc + scale · s · M``: a Maxwell draw ``M`` with a random sign ``s`` (JAX's
    signature: the draws have ``shape``, with ``loc`` and ``scale`` broadcast).

    >>> import numpy as np, autodiff as ad
    >>> x = ad.random.double_sided_maxwell(ad.random.key(0), 1.0, 2.0, (20000,))
    >>> abs(float(x.mean()) - 1.0) < 0.1 and abs(float(x.var()) - 12.0) < 0.5   # var 3·scale²
    True
    """
    dt = float_dtype(dtype, "double_sided_maxwell")
    shape = param_shape(shape, loc, scale)
    km, ks = split(check_key(key, "double_sided_maxwell"))
    m = maxwell(km, shape, dt)
    sign = anp.astype(rademacher(ks, shape), dt)
    return anp.add(anp.asarray(loc, dtype=dt), anp.multiply(anp.asarray(scale, dtype=dt),
                                                            anp.multiply(sign, m)))


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F distribution: ``(X / dfnum) / (Y / dfden)``, X, Y chi-square; differentiable in
    the degrees of freedom (through ``gamma``).

    >>> import numpy as np, autodiff as ad
    >>> x = ad.random.f(ad.random.key(0), 4.0, 10.0, (20000,))
    >>> abs(float(x.mean()) - 10.0 / 8.0) < 0.05                 # mean dfden / (dfden - 2)
    True
    """
    dt = float_dtype(dtype, "f")
    shape = param_shape(shape, dfnum, dfden)
    kn, kd = split(check_key(key, "f"))
    x = chisquare(kn, dfnum, shape, np.float64)
    y = chisquare(kd, dfden, shape, np.float64)
    return anp.astype(anp.divide(anp.divide(x, dfnum), anp.divide(y, dfden)), dt)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) with mean ``mean`` and shape parameter 1, by Michael,
    Schucany and Haas's transformation (1976), as JAX and numpy (``numpy.random.wald(mean,
    1.0)``).

    >>> import numpy as np, autodiff as ad
    >>> x = ad.random.wald(ad.random.key(0), 2.0, (20000,))
    >>> abs(float(x.mean()) - 2.0) < 0.1 and abs(float(x.var()) - 8.0) < 1.0   # var mean³
    True
    """
    dt = float_dtype(dtype, "wald")
    shape = param_shape(shape, mean)
    kn, ku = split(check_key(key, "wald"))
    mu = anp.asarray(mean, dtype=np.float64)
    y = _normal(kn, shape, np.dtype(np.float64), "wald")
    y = anp.multiply(y, y)
    my = anp.multiply(mu, y)
    x = anp.subtract(anp.add(mu, anp.multiply(0.5, anp.multiply(mu, my))),
                     anp.multiply(anp.multiply(0.5, mu),
                                  anp.sqrt(anp.add(anp.multiply(4.0, my), anp.multiply(my, my)))))
    u = unit_uniform(ku, shape, np.dtype(np.float64), "wald")
    out = anp.where(anp.less_equal(u, anp.divide(mu, anp.add(mu, x))), x,
                    anp.divide(anp.multiply(mu, mu), x))
    return anp.astype(out, dt)


def _binomial_f64(key, n, p, shape):
    """Binomial(n, p) as float64 of ``shape`` (n, p broadcast to it): inversion by
    sequential search where ``n·min(p, 1-p) < 10``, Hörmann's BTRS rejection (1993) above,
    on ``min(p, 1-p)`` and mirrored (as JAX and numpy)."""
    f64 = np.dtype(np.float64)
    n_in = anp.broadcast_to(anp.asarray(n, dtype=f64), shape)
    p_in = anp.broadcast_to(anp.asarray(p, dtype=f64), shape)
    # n < 0, p outside [0, 1] or NaN give NaN and n = inf gives inf (as in JAX); those
    # entries are sampled with n = 0 so that no loop below waits on them
    valid = anp.logical_and(anp.greater_equal(n_in, 0.0), anp.logical_and(
        anp.greater_equal(p_in, 0.0), anp.less_equal(p_in, 1.0)))
    finite = anp.logical_and(valid, anp.isfinite(n_in))
    n = anp.where(finite, n_in, 0.0)
    p = anp.where(finite, p_in, 0.5)
    special = anp.where(valid, anp.where(anp.greater(p_in, 0.0), np.inf, 0.0), np.nan)
    return anp.where(finite, _binomial_valid(key, n, p, shape), special)


def _binomial_valid(key, n, p, shape):
    f64 = np.dtype(np.float64)
    flip = anp.greater(p, 0.5)
    pp = anp.where(flip, anp.subtract(1.0, p), p)
    small = anp.less(anp.multiply(n, pp), 10.0)
    ki, kr = split(key)

    # inversion: the first k with F(k) > u, p_{k+1} = p_k (n - k)/(k + 1) · p/q
    ps = anp.where(small, pp, 0.0)
    ns = anp.where(small, n, 0.0)
    q = anp.subtract(1.0, ps)
    ratio = anp.divide(ps, anp.where(anp.greater(q, 0.0), q, 1.0))
    u = unit_uniform(ki, shape, f64, "binomial")

    def cond(c):
        k, _, cdf, _ = c
        return anp.any(anp.logical_and(anp.logical_and(small, anp.less_equal(cdf, u)),
                                       anp.less(k, ns)))

    def body(c):
        k, pk, cdf, out = c
        done = anp.logical_or(anp.logical_not(small),
                              anp.logical_or(anp.greater(cdf, u), anp.greater_equal(out, ns)))
        pk1 = anp.multiply(pk, anp.multiply(anp.divide(anp.subtract(ns, k), anp.add(k, 1.0)), ratio))
        out = anp.where(done, out, anp.add(out, 1.0))
        return anp.add(k, 1.0), pk1, anp.where(done, cdf, anp.add(cdf, pk1)), out
    p0 = anp.exp(anp.multiply(ns, anp.log1p(anp.negative(ps))))
    _, _, _, k_small = while_loop(cond, body, (np.float64(0.0), p0, p0, anp.zeros_like(ps)))

    # BTRS (transformed rejection with squeeze), acceptance ≥ 0.8 for n·p ≥ 10
    nb = anp.where(small, 100.0, n)
    pb = anp.where(small, 0.5, pp)
    qb = anp.subtract(1.0, pb)
    spq = anp.sqrt(anp.multiply(nb, anp.multiply(pb, qb)))
    b = anp.add(1.15, anp.multiply(2.53, spq))
    a = anp.add(anp.add(-0.0873, anp.multiply(0.0248, b)), anp.multiply(0.01, pb))
    c = anp.add(anp.multiply(nb, pb), 0.5)
    vr = anp.subtract(0.92, anp.divide(4.2, b))
    alpha = anp.multiply(anp.add(2.83, anp.divide(5.1, b)), spq)
    lpq = anp.log(anp.divide(pb, qb))
    m = anp.floor(anp.multiply(anp.add(nb, 1.0), pb))
    h = anp.add(gammaln(anp.add(m, 1.0)), gammaln(anp.add(anp.subtract(nb, m), 1.0)))

    def propose(key, kshape):
        ku, kv = split(key)
        U = anp.subtract(unit_uniform(ku, kshape, f64, "binomial"), 0.5)
        V = open_unit_uniform(kv, kshape, f64, "binomial")
        us = anp.subtract(0.5, anp.abs(U))
        k = anp.floor(anp.add(anp.multiply(anp.add(anp.divide(anp.multiply(2.0, a), us), b), U), c))
        inside = anp.logical_and(anp.greater_equal(k, 0.0), anp.less_equal(k, nb))
        fast = anp.logical_and(anp.greater_equal(us, 0.07), anp.less_equal(V, vr))
        kc = anp.clip(k, 0.0, nb)
        lhs = anp.log(anp.divide(anp.multiply(V, alpha),
                                 anp.add(anp.divide(a, anp.multiply(us, us)), b)))
        rhs = anp.add(anp.subtract(anp.subtract(h, gammaln(anp.add(kc, 1.0))),
                                   gammaln(anp.add(anp.subtract(nb, kc), 1.0))),
                      anp.multiply(anp.subtract(kc, m), lpq))
        ok = anp.logical_and(inside, anp.logical_or(fast, anp.less_equal(lhs, rhs)))
        return k, ok
    k_big = _rejection(propose, kr, shape)
    k = anp.where(small, k_small, k_big)
    return anp.where(flip, anp.subtract(n, k), k)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p): successes in ``n`` trials of probability ``p``, as floats (JAX's
    dtype). Exact: sequential inversion for ``n·min(p, 1−p) < 10``, BTRS rejection above.

    >>> import numpy as np, autodiff as ad
    >>> k = ad.random.binomial(ad.random.key(0), 40, 0.3, (20000,))
    >>> abs(float(k.mean()) - 12.0) < 0.1 and abs(float(k.var()) - 8.4) < 0.3
    True
    """
    dt = float_dtype(dtype, "binomial")
    shape = param_shape(shape, n, p)
    return anp.astype(_binomial_f64(check_key(key, "binomial"), n, p, shape), dt)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of ``n`` draws over the categories of ``p`` (last axis), by conditional
    binomials: category i gets Binomial(n − earlier counts, pᵢ / remaining mass). As in
    JAX 0.10, ``shape`` is the whole result's shape (its last entry the number of
    categories), ``p.shape`` by default; ``unroll`` is accepted.

    >>> import numpy as np, autodiff as ad
    >>> c = ad.random.multinomial(ad.random.key(0), 10, np.array([0.2, 0.3, 0.5]), shape=(4, 3))
    >>> c.shape, bool(np.all(c.sum(-1) == 10))
    ((4, 3), True)
    """
    dt = float_dtype(dtype, "multinomial")
    p = anp.asarray(p, dtype=np.float64)
    pshape = tuple(anp.shape(p))
    if not pshape:
        raise ShapeError("ad.random.multinomial: p needs at least one axis (the categories)",
                         source=user_source())
    k = pshape[-1]
    if shape is None:
        batch = np.broadcast_shapes(tuple(anp.shape(n)), pshape[:-1])
    else:
        shape = as_shape(shape)
        if not shape or shape[-1] != k:
            raise ShapeError(f"ad.random.multinomial: shape {shape} must end with the number "
                             f"of categories {k} (JAX 0.10: shape is the result's shape)",
                             source=user_source())
        batch = param_shape(shape[:-1], anp.zeros(np.broadcast_shapes(tuple(anp.shape(n)),
                                                                       pshape[:-1])))
    key = check_key(key, "multinomial")
    remaining = anp.broadcast_to(anp.asarray(n, dtype=np.float64), batch)
    mass = anp.ones(batch)
    counts = []
    for i, ki in enumerate(split(key, k)):
        pi = anp.broadcast_to(p[..., i], batch)
        if i == k - 1:
            c = remaining
        else:
            frac = anp.clip(anp.divide(pi, anp.where(anp.greater(mass, 0.0), mass, 1.0)), 0.0, 1.0)
            c = _binomial_f64(ki, remaining, frac, batch)
        counts.append(c)
        remaining = anp.subtract(remaining, c)
        mass = anp.subtract(mass, pi)
    return anp.astype(anp.stack(counts, axis=-1), dt)
