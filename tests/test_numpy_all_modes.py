"""``autodiff.numpy``'s functions against numpy itself, in every mode.

Each case is ``f(m, *args)`` with ``m`` either numpy or ``autodiff.numpy``. Every case
runs eagerly (numpy values in, numpy's result out), traced (``jit`` on the reference
interpreter) and batched (``vmap`` against a Python loop); differentiable cases are
checked against finite differences to second order in both modes. One Numba-compiled
program runs a selection of the cases together (one compile for all of them).
"""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.tree_util import tree_flatten
from jit_util import assert_compiled

RNG = np.random.default_rng(14)


def R(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape)


class Case:
    def __init__(self, name, f, args, diff=True, vmap=True, rtol=1e-12, atol=1e-12, f32=True,
                 cmp=None, order=2):
        self.name, self.f, self.args, self.diff, self.vmap = name, f, args, diff, vmap
        self.rtol, self.atol, self.f32, self.cmp, self.order = rtol, atol, f32, cmp, order

    def __repr__(self):
        return self.name


SORTED = np.sort(R(6))
POS = R(2, 3, lo=0.5, hi=2.0)
INTS = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])
def _put_along(m, x, i, v, axis):
    if m is np:                       # numpy's is in place
        y = np.array(x, copy=True)
        np.put_along_axis(y, i, v, axis)
        return y
    return m.put_along_axis(x, i, v, axis, inplace=False)


def _sized(name, args, ref=None, **kw):
    """A case of anp.<name> with JAX's size= (numpy's result length on ``args``)."""
    ref = ref or getattr(np, name)
    want = ref(*args, **kw)
    n = len(want[0] if isinstance(want, tuple) else want)

    def f(m, *a):
        if m is np:
            return ref(*a, **kw)
        out = getattr(m, name)(*a, size=n, **kw)
        return tuple(out) if isinstance(out, tuple) else out
    return Case(name + (" " + " ".join(kw) if kw else ""), f, args, diff=False, vmap=False)


NANS = np.array([[1.0, np.nan, 3.0, 0.5], [np.nan, np.nan, 2.1, -1.0], [4.0, 1.2, 2.0, 3.3]])
WTS = RNG.uniform(0.2, 2.0, size=(3, 7))
WTS[0, :2] = 0.0                     # leading zero weights: numpy skips them even at q = 0


def SV(*shape, s=None):
    """A random matrix (stack) with well-separated singular values s (default 3, 2, 1, ...)."""
    m, n = shape[-2:]
    k = min(m, n)
    s = np.arange(k, 0, -1.0) * 1.5 if s is None else np.asarray(s)
    u = np.linalg.qr(RNG.normal(size=shape[:-2] + (m, m)))[0][..., :k]
    v = np.linalg.qr(RNG.normal(size=shape[:-2] + (n, n)))[0][..., :k]
    return (u * s) @ np.swapaxes(v, -1, -2)

CASES = [
    # shapes
    Case("rot90", lambda m, x: m.rot90(x), [R(2, 3)]),
    Case("rot90 k=3 axes", lambda m, x: m.rot90(x, 3, axes=(2, 0)), [R(2, 3, 4)]),
    Case("rot90 k=2", lambda m, x: m.rot90(x, -2), [R(2, 3)]),
    Case("rollaxis", lambda m, x: m.rollaxis(x, 2), [R(2, 3, 4)]),
    Case("rollaxis start", lambda m, x: m.rollaxis(x, 0, 3), [R(2, 3, 4)]),
    Case("dsplit", lambda m, x: m.dsplit(x, 2), [R(2, 1, 4)]),
    Case("hsplit", lambda m, x: m.hsplit(x, [1]), [R(2, 3)]),
    Case("hsplit 1d", lambda m, x: m.hsplit(x, 2), [R(4)], vmap=False),
    Case("vsplit", lambda m, x: m.vsplit(x, 2), [R(4, 3)]),
    Case("tril 1d", lambda m, x: m.tril(x, -1), [R(3)]),
    Case("triu 1d", lambda m, x: m.triu(x, 1), [R(3)]),
    Case("tril 3d", lambda m, x: m.tril(x), [R(2, 3, 3)]),
    Case("cross axes", lambda m, a, b: m.cross(a, b, axisa=0, axisb=1, axisc=0), [R(3, 2), R(2, 3)]),
    Case("cross axis", lambda m, a, b: m.cross(a, b, axis=0), [R(3, 2), R(3, 2)]),
    Case("cross 2x3", lambda m, a, b: m.cross(a, b), [R(4, 3), R(4, 3)]),
    Case("r_", lambda m, a, b: m.r_[a, 0.5, b], [R(2), R(3)]),
    Case("r_ axis", lambda m, a, b: m.r_["1", a, b], [R(2, 2), R(2, 3)]),
    Case("r_ ndmin", lambda m, a: m.r_["0,2,0", a, a], [R(3)], vmap=False),
    Case("r_ slice", lambda m, a: m.r_[a, 0:3, -1:1:3j], [R(2)], vmap=False),
    Case("c_", lambda m, a, b: m.c_[a, b], [R(3), R(3)]),
    Case("c_ 2d", lambda m, a, b: m.c_[a, b], [R(3, 2), R(3)], vmap=False),
    Case("block", lambda m, a, b: m.block([[a, b], [b, a]]), [R(2, 2), R(2, 2)]),
    Case("block 1d", lambda m, a, b: m.block([a, b, 1.0]), [R(2), R(3)]),
    Case("vander", lambda m, x: m.vander(x, 4), [R(3)]),
    Case("vander inc", lambda m, x: m.vander(x, increasing=True), [R(3)]),
    Case("ix_", lambda m, a, b: m.ix_(a, b), [R(2), R(3)], vmap=False),
    Case("meshgrid sparse", lambda m, a, b: m.meshgrid(a, b, sparse=True), [R(2), R(3)]),
    Case("meshgrid ij", lambda m, a, b, c: m.meshgrid(a, b, c, indexing="ij"), [R(2), R(3), R(2)]),
    Case("meshgrid xy3", lambda m, a, b, c: m.meshgrid(a, b, c), [R(2), R(3), R(2)]),
    Case("diagflat", lambda m, x: m.diagflat(x, -1), [R(2, 2)]),
    Case("resize", lambda m, x: m.resize(x, (3, 3)), [R(2, 2)]),
    Case("unstack", lambda m, x: m.unstack(x, axis=1), [R(2, 3)]),
    Case("vecdot", lambda m, a, b: m.vecdot(a, b), [R(2, 3), R(3)]),
    Case("matvec", lambda m, a, b: m.matvec(a, b), [R(2, 3, 4), R(4)]),
    Case("vecmat", lambda m, a, b: m.vecmat(a, b), [R(3), R(2, 3, 4)]),
    Case("put_along_axis", lambda m, x, v: _put_along(m, x, np.array([[0], [2]]), v, 1),
         [R(2, 3), R(2, 1)]),
    Case("piecewise", lambda m, x: m.piecewise(x, [x < 0, x > 1], [lambda v: v * v, lambda v: 2 * v, 0.5]),
         [np.array([-1.5, -0.3, 0.4, 0.9, 1.3, 1.8])]),
    Case("apply_along_axis", lambda m, x: m.apply_along_axis(lambda r: r * r.sum(), 1, x), [R(2, 3)]),
    Case("apply_along_axis scalar", lambda m, x: m.apply_along_axis(lambda r: (r ** 2).sum(), 0, x), [R(2, 3)]),
    Case("unravel_index", lambda m, i: m.unravel_index(i, (3, 4)), [np.array([0, 5, 11])], diff=False),
    Case("ravel_multi_index", lambda m, i, j: m.ravel_multi_index((i, j), (3, 4), mode="clip"),
         [np.array([0, 2, 5]), np.array([1, 3, -1])], diff=False),
    Case("choose", lambda m, i, a, b: m.choose(i, [a, b]), [np.array([0, 1, 1]), R(3), R(3)]),
    Case("delete", lambda m, x: m.delete(x, [0, 2], axis=1), [R(2, 4)]),
    Case("delete flat", lambda m, x: m.delete(x, slice(1, 3)), [R(2, 3)]),
    Case("insert", lambda m, x, v: m.insert(x, 1, v, axis=1), [R(2, 3), R(2)], vmap=False),
    Case("insert seq", lambda m, x, v: m.insert(x, [0, 2, 2], v), [R(4), R(3)]),
    Case("compress const", lambda m, x: m.compress(np.array([True, False, True]), x, axis=1), [R(2, 3)]),
    Case("einsum sublist", lambda m, a, b: m.einsum(a, [0, 1], b, [1, 2], [0, 2]), [R(2, 3), R(3, 4)]),
    Case("einsum sublist implicit", lambda m, a: m.einsum(a, [0, 1], a, [0, 1]), [R(2, 3)]),
    Case("einsum ellipsis bcast", lambda m, a, b: m.einsum("...ij,...jk->...ik", a, b), [R(2, 1, 2, 3), R(4, 3, 2)]),
    Case("einsum ellipsis sublist", lambda m, a, b: m.einsum(a, [Ellipsis, 0], b, [Ellipsis, 0], [Ellipsis]),
         [R(2, 3), R(3)]),
    Case("einsum ellipsis implicit", lambda m, a: m.einsum("i...i", a), [R(3, 2, 3)]),
    # math
    Case("linspace", lambda m, a, b: m.linspace(a, b, 5), [R(), R()]),
    Case("linspace arrays", lambda m, a, b: m.linspace(a, b, 4, endpoint=False, axis=-1), [R(2), R(2)]),
    Case("linspace retstep", lambda m, a, b: m.linspace(a, b, 3, retstep=True), [R(), R()]),
    Case("logspace", lambda m, a, b: m.logspace(a, b, 4, base=2.0), [R(), R()]),
    Case("geomspace", lambda m, a, b: m.geomspace(a, b, 5), [R(lo=0.5, hi=1), R(lo=2, hi=3)]),
    Case("geomspace neg", lambda m, a, b: m.geomspace(-a, -b, 4, endpoint=False), [R(lo=0.5, hi=1), R(lo=2, hi=3)]),
    Case("gradient", lambda m, f: m.gradient(f), [R(6)]),
    Case("gradient 2d", lambda m, f: m.gradient(f, 0.5, 2.0), [R(4, 5)]),
    Case("gradient edge2", lambda m, f: m.gradient(f, edge_order=2, axis=0), [R(5, 2)]),
    Case("gradient coords", lambda m, f, x: m.gradient(f, x), [R(5), SORTED[:5]], vmap=False),
    Case("gradient coords edge2", lambda m, f, x: m.gradient(f, x, edge_order=2), [R(5), SORTED[:5]], vmap=False),
    Case("ediff1d", lambda m, x: m.ediff1d(x, to_begin=[0.5], to_end=2.0), [R(2, 2)]),
    Case("unwrap", lambda m, p: m.unwrap(p), [np.array([0.0, 3.0, 6.5, 0.2, -3.5, 2.5])]),
    Case("unwrap period", lambda m, p: m.unwrap(p, period=4.0, axis=0), [R(5, 2, lo=-3, hi=3)]),
    Case("correlate valid", lambda m, a, v: m.correlate(a, v), [R(5), R(3)]),
    Case("correlate full", lambda m, a, v: m.correlate(a, v, "full"), [R(3), R(5)]),
    Case("correlate same swap", lambda m, a, v: m.correlate(a, v, "same"), [R(3), R(5)]),
    Case("real", lambda m, x: m.real(x), [R(3)]),
    Case("imag", lambda m, x: m.imag(x), [R(3)], diff=False),
    Case("angle", lambda m, x: m.angle(x), [np.array([-1.0, 0.0, 2.0])], diff=False),
    Case("angle deg", lambda m, x: m.angle(x, deg=True), [np.array([-1.0, 0.5, 2.0])], diff=False),
    Case("real_if_close", lambda m, x: m.real_if_close(x), [R(3)]),
    Case("iscomplex", lambda m, x: m.iscomplex(x), [R(3)], diff=False),
    Case("isreal", lambda m, x: m.isreal(x), [R(3)], diff=False),
    Case("isposinf", lambda m, x: m.isposinf(x), [np.array([np.inf, -np.inf, 1.0])], diff=False),
    Case("isneginf", lambda m, x: m.isneginf(x), [np.array([np.inf, -np.inf, 1.0])], diff=False),
    Case("frexp", lambda m, x: m.frexp(x),
         [np.array([0.0, 1.0, -3.0, 0.75, 1e-310, -5e300, 2.0 ** -1022, np.inf, np.nan])], diff=False,
         vmap=False),
    Case("frexp diff", lambda m, x: m.frexp(x)[0], [R(4)]),
    Case("ldexp", lambda m, x, e: m.ldexp(x, e), [R(4), np.array([0, 3, -1070, 1000])], order=1),
    Case("modf", lambda m, x: m.modf(x), [np.array([-2.5, 0.25, 3.0, -0.0, np.inf])], diff=False, vmap=False),
    Case("modf diff", lambda m, x: m.modf(x)[0], [R(4) + 0.25]),
    Case("spacing", lambda m, x: m.spacing(x),
         [np.array([1.0, -1.0, 0.0, 1e-310, 3e300, 2.0 ** -1022, 0.75])], diff=False),
    Case("nextafter", lambda m, a, b: m.nextafter(a, b),
         [np.array([1.0, 1.0, -1.0, 0.0, 0.0, 2.0, 1e-320, 3.0, 5e-324]),
          np.array([2.0, 0.0, 0.0, 1.0, -1.0, 2.0, 0.0, np.inf, 0.0])], diff=False),
    Case("i0", lambda m, x: m.i0(x), [np.array([0.0, 0.5, -1.5, 4.0, 12.0, 30.0])], rtol=1e-13),
    Case("divmod", lambda m, a, b: m.divmod(a, b), [R(3) * 5, R(3, lo=0.5, hi=2)], diff=False),
    Case("left_shift", lambda m, a, b: m.left_shift(a, b), [np.array([1, -3, 5, 7]), np.array([0, 2, 63, 70])],
         diff=False),
    Case("right_shift", lambda m, a, b: m.right_shift(a, b), [np.array([100, -100, 5, -7]), np.array([1, 3, 63, 70])],
         diff=False),
    Case("bitwise_count", lambda m, a: m.bitwise_count(a), [np.array([0, 7, -8, 2 ** 40 + 3])], diff=False),
    Case("gcd", lambda m, a, b: m.gcd(a, b), [np.array([12, -18, 0, 7, 2 ** 40]), np.array([8, 24, 5, 0, 6])],
         diff=False, vmap=False),
    Case("lcm", lambda m, a, b: m.lcm(a, b), [np.array([4, -6, 0, 7]), np.array([6, 4, 5, 3])], diff=False),
    Case("packbits", lambda m, a: m.packbits(a, axis=-1), [np.array([[1, 0, 1, 1, 0, 0, 0, 1, 1], [0] * 8 + [1]])],
         diff=False),
    Case("packbits little", lambda m, a: m.packbits(a, bitorder="little"), [np.array([1, 0, 1, 1])], diff=False),
    Case("unpackbits", lambda m, a: m.unpackbits(a, axis=0, count=-3),
         [np.array([[3, 255], [128, 7]], dtype=np.uint8)], diff=False),
    Case("polyadd", lambda m, a, b: m.polyadd(a, b), [R(3), R(2)]),
    Case("polysub", lambda m, a, b: m.polysub(a, b), [R(2), R(4)]),
    Case("polymul", lambda m, a, b: m.polymul(a, b), [R(3), R(2)]),
    Case("polyder", lambda m, a: m.polyder(a, 2), [R(5)]),
    Case("polyint", lambda m, a: m.polyint(a, 2, k=[1.0, 2.0]), [R(3)]),
    Case("polydiv", lambda m, u, v: m.polydiv(u, v), [R(5), R(3) + np.array([3.0, 0, 0])]),
    Case("poly", lambda m, r: m.poly(r), [R(3)]),
    Case("polyval", lambda m, p, x: m.polyval(p, x), [R(3), R(4)]),
    Case("interp", lambda m, x, xp, fp: m.interp(x, xp, fp, left=-1.0), [R(5), SORTED, R(6)], vmap=False),
    Case("interp period", lambda m, x, xp, fp: m.interp(x, xp, fp, period=3.0),
         [R(5, lo=-4, hi=4), np.array([0.2, 0.9, 1.7, 2.6]), R(4)], vmap=False),
    Case("polyfit", lambda m, x, y: m.polyfit(x, y, 2), [SORTED, R(6)], rtol=1e-9, atol=1e-10, order=1),
    Case("polyfit weighted 2d", lambda m, x, y, w: m.polyfit(x, y, 1, w=w), [SORTED, R(6, 2), R(6, lo=0.5, hi=1)],
         rtol=1e-9, atol=1e-10, vmap=False, order=1),
    # sets, searching, partitions
    _sized("unique", [INTS]),
    _sized("unique", [INTS], return_index=True, return_inverse=True, return_counts=True),
    _sized("unique", [np.array([2.0, np.nan, 1.0, 2.0, np.nan])]),
    _sized("unique_counts", [INTS]),
    _sized("unique_inverse", [INTS.reshape(2, 5)]),
    _sized("unique_values", [INTS], ref=np.unique),
    _sized("union1d", [INTS[:4], INTS[5:]]),
    _sized("intersect1d", [INTS[:6], INTS[4:]]),
    _sized("setdiff1d", [INTS[:6], INTS[4:]]),
    _sized("setxor1d", [INTS[:6], INTS[4:]]),
    Case("isin", lambda m, a, b: m.isin(a, b), [INTS.reshape(2, 5), np.array([1, 5, 7])], diff=False),
    Case("isin invert", lambda m, a, b: m.isin(a, b, invert=True), [INTS, np.array([1, 5])], diff=False),
    Case("digitize", lambda m, x, b: m.digitize(x, b), [R(7), SORTED], diff=False),
    Case("digitize right dec", lambda m, x, b: m.digitize(x, b, right=True), [np.r_[SORTED[2], R(5)], SORTED[::-1]],
         diff=False),
    Case("searchsorted right sorter", lambda m, a, v: m.searchsorted(a, v, side="right", sorter=np.argsort(a)),
         [R(6), R(4)], diff=False, vmap=False),
    Case("lexsort", lambda m, a, b: m.lexsort((a, b)), [np.array([1, 5, 1, 4, 3, 4, 4]), np.array([9, 4, 0, 4, 0, 2, 1])],
         diff=False),
    Case("lexsort 2d keys", lambda m, k: m.lexsort(k), [np.array([[3, 1, 2, 1], [0, 0, 1, 1]])], diff=False, vmap=False),
    Case("partition kth", lambda m, x: m.partition(x, 2)[2], [R(5)]),
    Case("partition", lambda m, x: m.partition(x, (1, 3), axis=0), [R(5, 2)], cmp="partition"),
    Case("argpartition", lambda m, x: np.take_along_axis(x, np.asarray(m.argpartition(x, 1)), -1)[..., 1]
         if m is np else anp.take_along_axis(x, m.argpartition(x, 1), -1)[..., 1], [R(2, 4)], diff=False),
    # histograms
    Case("histogram", lambda m, a: m.histogram(a, 4), [R(20)], diff=False, vmap=False),
    Case("histogram range weights", lambda m, a, w: m.histogram(a, 3, range=(-1.0, 1.5), weights=w),
         [R(20), R(20)], vmap=False),
    Case("histogram edges density", lambda m, a: m.histogram(a, np.array([-2.0, -0.5, 0.0, 2.0]), density=True)[0],
         [R(20)], diff=False),
    Case("histogram_bin_edges", lambda m, a: m.histogram_bin_edges(a, 5), [R(10)], vmap=False),
    Case("histogram2d", lambda m, x, y, w: m.histogram2d(x, y, bins=(3, 2), weights=w), [R(15), R(15), R(15)],
         vmap=False),
    Case("histogramdd", lambda m, s: m.histogramdd(s, bins=2, range=[(-2, 2), (-2, 2)], density=True)[0],
         [R(12, 2)], diff=False, vmap=False),
    Case("bincount weights", lambda m, x, w: m.bincount(x, w, minlength=12), [INTS, R(10)], vmap=False),
    # quantiles and nan-reductions
    *[Case(f"quantile {meth}", lambda m, a, meth=meth: m.quantile(a, [0.1, 0.5, 0.77, 1.0], axis=-1, method=meth),
           [R(3, 7)], diff=meth in ("linear", "weibull", "hazen", "median_unbiased", "normal_unbiased"))
      for meth in ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf", "averaged_inverted_cdf",
                   "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
                   "normal_unbiased")],
    Case("quantile even n", lambda m, a: m.quantile(a, 0.5, method="averaged_inverted_cdf"), [R(6)], diff=False),
    Case("quantile closest even", lambda m, a: m.quantile(a, [0.25, 0.75], method="closest_observation"), [R(6)],
         diff=False),
    Case("percentile keepdims", lambda m, a: m.percentile(a, 30, axis=0, keepdims=True), [R(4, 3)]),
    Case("nanquantile", lambda m, a: m.nanquantile(a, [0.25, 0.5], axis=1), [NANS], vmap=False),
    Case("nanpercentile", lambda m, a: m.nanpercentile(a, 40, axis=0, method="nearest"), [NANS], diff=False,
         vmap=False),
    Case("nanmedian", lambda m, a: m.nanmedian(a, axis=1), [NANS], vmap=False),
    # weighted quantiles (numpy: method='inverted_cdf' only); leading zero weights included
    Case("quantile weights", lambda m, a, w: m.quantile(a, [0.0, 0.3, 0.5, 1.0], axis=1, method="inverted_cdf",
                                                        weights=w), [R(3, 7), WTS], diff=False),
    # (differentiated in a only: finite differences would push the zero weights negative)
    Case("quantile weights diff", lambda m, a: m.quantile(a, [0.0, 0.3, 0.5, 1.0], axis=1, method="inverted_cdf",
                                                          weights=WTS), [R(3, 7)]),
    Case("percentile weights 1d", lambda m, a, w: m.percentile(a, [20, 70], axis=0, method="inverted_cdf", weights=w),
         [R(7, 2), WTS[1]]),
    Case("quantile weights all", lambda m, a: m.quantile(a, 0.4, method="inverted_cdf", weights=WTS, keepdims=True),
         [R(3, 7)], vmap=False),
    Case("nanquantile weights", lambda m, a, w: m.nanquantile(a, [0.25, 0.9], axis=1, method="inverted_cdf",
                                                              weights=w), [NANS, WTS[:, :4]], vmap=False, diff=False),
    Case("nanpercentile weights", lambda m, a: m.nanpercentile(a, 50, axis=1, method="inverted_cdf",
                                                               weights=WTS[:, :4]), [NANS], vmap=False),
    Case("nanmedian all", lambda m, a: m.nanmedian(a), [NANS], vmap=False),
    Case("nanargmax", lambda m, a: m.nanargmax(a, axis=1), [NANS], diff=False, vmap=False),
    Case("nanargmin", lambda m, a: m.nanargmin(a), [NANS], diff=False, vmap=False),
    Case("nanprod", lambda m, a: m.nanprod(a, axis=0), [NANS], vmap=False),
    Case("nancumsum", lambda m, a: m.nancumsum(a, axis=1), [NANS], vmap=False),
    Case("nancumprod", lambda m, a: m.nancumprod(a), [NANS], vmap=False),
    Case("nanvar", lambda m, a: m.nanvar(a, axis=1, ddof=1), [NANS], vmap=False),
    Case("nanstd", lambda m, a: m.nanstd(a, axis=0), [NANS], vmap=False),
    Case("cov weights", lambda m, x, f, a: m.cov(x, fweights=f, aweights=a), [R(3, 6), np.array([1, 2, 1, 3, 1, 2]),
                                                                            R(6, lo=0.5, hi=1)], vmap=False),
    Case("cov rowvar y", lambda m, x, y: m.cov(x, y, rowvar=False, ddof=0), [R(5, 2), R(5)], vmap=False),
    Case("corrcoef", lambda m, x: m.corrcoef(x), [R(3, 5)]),
    # linalg
    Case("linalg.pinv", lambda m, a: m.linalg.pinv(a), [SV(4, 3)], rtol=1e-10, atol=1e-12),
    Case("linalg.pinv wide", lambda m, a: m.linalg.pinv(a), [SV(2, 3, 5)], rtol=1e-10, atol=1e-12),
    Case("linalg.lstsq", lambda m, a, b: tuple(m.linalg.lstsq(a, b)), [SV(5, 3), R(5, 2)], rtol=1e-10,
         atol=1e-12, vmap=False, order=1),
    Case("linalg.lstsq x", lambda m, a, b: m.linalg.lstsq(a, b)[0], [SV(5, 3), R(5)], rtol=1e-10, atol=1e-12,
         vmap=False),
    Case("linalg.matrix_rank", lambda m, a: m.linalg.matrix_rank(a), [R(4, 2) @ R(2, 3)], diff=False),
    Case("linalg.cond", lambda m, a: m.linalg.cond(a), [SV(3, 3)], rtol=1e-10),
    Case("linalg.cond fro", lambda m, a: m.linalg.cond(a, "fro"), [R(3, 3) + 3 * np.eye(3)], rtol=1e-10),
    Case("linalg.cond 1", lambda m, a: m.linalg.cond(a, 1), [R(3, 3) + 3 * np.eye(3)], rtol=1e-10, order=1),
    Case("linalg.cond -2", lambda m, a: m.linalg.cond(a, -2), [SV(2, 3, 3)], rtol=1e-10),
    Case("linalg.tensorinv", lambda m, a: m.linalg.tensorinv(a, 1), [SV(6, 6).reshape(6, 2, 3)],
         rtol=1e-10, vmap=False),
    Case("linalg.tensorsolve", lambda m, a, b: m.linalg.tensorsolve(a, b),
         [SV(6, 6).reshape(2, 3, 6), R(2, 3)], rtol=1e-10, vmap=False),
    Case("linalg.vector_norm", lambda m, x: m.linalg.vector_norm(x, axis=(0, 2), ord=3), [R(2, 3, 2)], rtol=1e-10),
    Case("linalg.vector_norm keepdims", lambda m, x: m.linalg.vector_norm(x, keepdims=True), [R(2, 3)]),
    Case("linalg.matrix_norm", lambda m, x: m.linalg.matrix_norm(x, ord="nuc"), [SV(2, 3, 3)], rtol=1e-10),
    Case("linalg.matrix_norm 2", lambda m, x: m.linalg.matrix_norm(x, ord=-2, keepdims=True), [SV(3, 4)],
         rtol=1e-10),
    Case("linalg.svdvals", lambda m, x: m.linalg.svdvals(x), [SV(2, 4, 3)], rtol=1e-10),
    Case("linalg.eigvalsh U", lambda m, x: m.linalg.eigvalsh(x, UPLO="U"), [R(3, 3)], rtol=1e-10),
    # traced eigvals are complex (JAX's rule, issue 16): compare the real parts
    Case("linalg.eigvals symmetric", lambda m, x: m.sort(m.real(m.linalg.eigvals(x + x.T))), [R(3, 3)], rtol=1e-10,
         vmap=False),
    Case("linalg.matrix_transpose", lambda m, x: m.linalg.matrix_transpose(x), [R(2, 3, 4)]),
    Case("linalg.outer", lambda m, a, b: m.linalg.outer(a, b), [R(2), R(3)]),
    Case("linalg.cross", lambda m, a, b: m.linalg.cross(a, b), [R(2, 3), R(2, 3)]),
    Case("linalg.vecdot", lambda m, a, b: m.linalg.vecdot(a, b, axis=0), [R(3, 2), R(3, 2)]),
    Case("linalg.diagonal", lambda m, a: m.linalg.diagonal(a, offset=1), [R(2, 3, 3)]),
    Case("linalg.tensordot", lambda m, a, b: m.linalg.tensordot(a, b, axes=1), [R(2, 3), R(3, 2)]),
    Case("linalg.matmul", lambda m, a, b: m.linalg.matmul(a, b), [R(2, 3), R(3, 2)]),
    Case("linalg.multi_dot", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [R(2, 3), R(3, 3), R(3, 2)]),
    Case("linalg.matrix_power", lambda m, a: m.linalg.matrix_power(a, 3), [R(3, 3)], rtol=1e-10),
    # roots of traced coefficients (real roots): LAPACK on the host, implicit-function derivative
    Case("roots", lambda m, p: m.roots(p), [np.poly([0.5, -1.2, 2.0, 3.1])], rtol=1e-10, atol=1e-12),
    Case("roots trailing zero", lambda m, p: m.roots(p), [np.poly([0.7, -1.5, 0.0])], rtol=1e-10, atol=1e-12,
         order=1),
]


def _same(got, want, case, dt=np.float64, what=""):
    g, _ = tree_flatten(got)
    w, _ = tree_flatten(want)
    assert len(g) == len(w), f"{case.name}{what}: {len(g)} outputs, numpy has {len(w)}"
    rtol = case.rtol if dt == np.float64 else max(case.rtol, 3e-5)
    atol = case.atol if dt == np.float64 else max(case.atol, 3e-5)
    for a, b in zip(g, w):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"{case.name}{what}: shape {a.shape} vs numpy's {b.shape}"
        if case.cmp == "partition":
            a, b = np.sort(a, axis=0), np.sort(b, axis=0)
        if b.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b, err_msg=f"{case.name}{what}")
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{case.name}{what}")


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_eager_and_traced_match_numpy(case):
    want = case.f(np, *case.args)
    _same(case.f(anp, *case.args), want, case, what=" (eager)")
    traced = ad.jit(lambda *a: case.f(anp, *a), backend="interpret")(*case.args)
    _same(traced, want, case, what=" (traced)")
    if case.f32 and all(np.asarray(a).dtype == np.float64 for a in case.args):
        with np.errstate(over="ignore"):          # (1e300 and the like become inf in float32)
            a32 = [np.asarray(a, np.float32) for a in case.args]
        want32 = case.f(np, *a32)
        got32 = ad.jit(lambda *a: case.f(anp, *a), backend="interpret")(*a32)
        for g, w in zip(tree_flatten(got32)[0], tree_flatten(want32)[0]):
            assert np.asarray(g).dtype == np.asarray(w).dtype, f"{case.name}: float32 gives {np.asarray(g).dtype}"
        _same(got32, want32, case, np.float32, " (float32)")


def _float_args(case):
    return [i for i, a in enumerate(case.args) if np.asarray(a).dtype.kind == "f"]


@pytest.mark.parametrize("case", [c for c in CASES if c.diff], ids=repr)
def test_derivatives_match_finite_differences(case):
    idx = _float_args(case)
    args = list(case.args)

    def f(*fl):
        full = list(args)
        for i, v in zip(idx, fl):
            full[i] = v
        out = case.f(anp, *full)
        leaves = [o for o in tree_flatten(out)[0] if anp.asarray(o).dtype.kind == "f"]
        return tuple(leaves) if len(leaves) > 1 else leaves[0]
    ad.check_grads(f, tuple(args[i] for i in idx), order=case.order, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("case", [c for c in CASES if c.vmap], ids=repr)
def test_vmap_matches_a_loop(case):
    # batch every argument: three slightly different copies
    batched = [np.stack([a, a * 0.75 if np.asarray(a).dtype.kind == "f" else a, a]) for a in map(np.asarray, case.args)]
    got = ad.vmap(lambda *a: case.f(anp, *a))(*batched)
    loop = [case.f(np, *[b[k] for b in batched]) for k in range(3)]
    gl = tree_flatten(got)[0]
    for j, g in enumerate(gl):
        want = np.stack([np.asarray(tree_flatten(l)[0][j]) for l in loop])
        c = Case(case.name, None, None, rtol=case.rtol, atol=case.atol, cmp=case.cmp)
        if case.cmp == "partition":
            g, want = np.sort(np.asarray(g), axis=1), np.sort(want, axis=1)
            c.cmp = None
        _same(g, want, c, what=" (vmap)")


# one compiled program for a selection of cases: Numba lowering of every construct used
_JIT_CASES = [c for c in CASES if c.name in {
    "rot90 k=3 axes", "tril 1d", "cross axes", "r_", "linspace arrays", "gradient coords edge2", "unwrap",
    "frexp diff", "nextafter", "gcd", "unpackbits", "isin", "lexsort", "histogram range weights",
    "quantile closest even", "nanmedian", "einsum ellipsis bcast", "linalg.pinv", "linalg.svdvals", "insert seq",
    "roots"}]


@pytest.mark.parametrize("case", _JIT_CASES, ids=lambda c: c.name)
def test_selected_cases_under_numba_jit(case):
    # one kernel per case: compile cost grows faster than linearly with one function's size
    jitted = ad.jit(lambda *a: case.f(anp, *a))
    jitted.lower(*case.args).compile()
    _same(assert_compiled(jitted, *case.args), case.f(np, *case.args), case, what=" (numba jit)")


# ----------------------------------------------------------------------------
# properties numpy's own results cannot show
# ----------------------------------------------------------------------------

def test_unique_with_size_under_jit_pads_with_fill_value():
    f = ad.jit(lambda x: anp.unique(x, return_index=True, return_inverse=True, return_counts=True,
                                    size=8, fill_value=-1), backend="interpret")
    vals, idx, inv, cnt = f(INTS)
    u, i, v, c = np.unique(INTS, True, True, True)
    k = len(u)
    np.testing.assert_array_equal(vals[:k], u)
    np.testing.assert_array_equal(vals[k:], -1)
    np.testing.assert_array_equal(idx[:k], i)
    np.testing.assert_array_equal(inv, v)
    np.testing.assert_array_equal(cnt[:k], c)
    np.testing.assert_array_equal(cnt[k:], 0)
    # truncation keeps the smallest values; the default fill is the minimum
    np.testing.assert_array_equal(ad.jit(lambda x: anp.unique(x, size=3))(INTS), u[:3])
    np.testing.assert_array_equal(anp.unique(np.array([5, 5, 2]), size=4), [2, 5, 2, 2])
    with pytest.raises(ad.errors.ConcretizationError, match="size="):
        ad.jit(anp.unique)(INTS)


def test_data_dependent_sizes_read_concrete_values_under_grad():
    x = np.array([0.2, 1.1, 0.3, 1.2, 2.6])
    out, t = ad.jvp(lambda v: anp.unique(anp.round(v)), (x,), (x,))
    np.testing.assert_array_equal(out, [0.0, 1.0, 3.0])
    np.testing.assert_array_equal(t, 0.0)
    vals = ad.grad(lambda v: anp.sum(anp.unique(v) ** 2))(np.array([2.0, 1.0, 2.0]))
    np.testing.assert_allclose(vals, [4.0, 2.0, 0.0])           # one copy of each value gets it


def test_set_operations_with_size_under_jit():
    a, b = INTS[:6], INTS[4:]
    for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
        want = getattr(np, name)(a, b)
        got = ad.jit(lambda x, y, n=name: getattr(anp, name)(x, y, size=len(want) + 2, fill_value=0),
                     backend="interpret")(a, b)
        np.testing.assert_array_equal(got[:len(want)], want, err_msg=name)
        np.testing.assert_array_equal(got[len(want):], 0, err_msg=name)


def test_compress_with_size_under_jit():
    x = R(5)
    c = np.array([True, False, True, True, False])
    got = ad.jit(lambda c, x: anp.compress(c, x, size=4, fill_value=9.0), backend="interpret")(c, x)
    np.testing.assert_array_equal(got, np.r_[x[c], 9.0])
    np.testing.assert_array_equal(anp.extract(c, x, size=3), x[c])


def test_partition_puts_kth_in_place_and_splits_the_rest():
    x = R(3, 9)
    for kth in (0, 4, 8):
        p = ad.jit(lambda v: anp.partition(v, kth, axis=1), backend="interpret")(x)
        np.testing.assert_allclose(p[:, kth], np.sort(x, axis=1)[:, kth])
        assert np.all(p[:, :kth] <= p[:, kth:kth + 1]) and np.all(p[:, kth + 1:] >= p[:, kth:kth + 1])
        ip = ad.jit(lambda v: anp.argpartition(v, kth), backend="interpret")(x)
        np.testing.assert_allclose(np.take_along_axis(x, ip, 1)[:, kth], np.sort(x, axis=1)[:, kth])


def test_linspace_derivatives_in_both_end_points():
    # y_k = a + k (b - a)/(n - 1): dy/da = 1 - k/(n-1), dy/db = k/(n-1)
    ja, jb = ad.jacfwd(lambda a, b: anp.linspace(a, b, 5), argnums=(0, 1))(0.5, 2.0)
    np.testing.assert_allclose(ja, 1 - np.arange(5) / 4, rtol=1e-15)
    np.testing.assert_allclose(jb, np.arange(5) / 4, rtol=1e-15)
    y = ad.jit(lambda a, b: anp.linspace(a, b, 7))(np.float32(1), np.float32(3))
    assert y.dtype == np.float32 and y[-1] == 3.0


def test_gradient_is_exact_on_quadratics():
    # central differences are exact for quadratics inside; second-order edges at the ends too
    x = np.cumsum(RNG.uniform(0.5, 1.5, 8))
    f = 3 * x ** 2 - x
    g = ad.jit(lambda f, x: anp.gradient(f, x, edge_order=2), backend="interpret")(f, x)
    np.testing.assert_allclose(g, 6 * x - 1, rtol=1e-10)


def test_frexp_ldexp_round_trip_and_mantissa_derivative():
    x = np.array([3.0, -0.1, 1e-300, 7e-320, 1e300])
    m, e = ad.jit(anp.frexp, backend="interpret")(x)
    assert e.dtype == np.int32
    np.testing.assert_array_equal(ad.jit(anp.ldexp, backend="interpret")(m, e), x)
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(anp.frexp(v)[0]))(np.array([3.0, 0.3])), [0.25, 2.0])


def test_nextafter_steps_exactly_one_ulp():
    x = R(50) * 10.0 ** RNG.integers(-300, 300, 50)
    up = ad.jit(lambda v: anp.nextafter(v, np.inf), backend="interpret")(x)
    down = ad.jit(lambda v: anp.nextafter(v, -np.inf), backend="interpret")(x)
    np.testing.assert_array_equal(up, np.nextafter(x, np.inf))
    np.testing.assert_array_equal(down, np.nextafter(x, -np.inf))
    np.testing.assert_array_equal(ad.jit(anp.spacing, backend="interpret")(x), np.spacing(x))


def test_vectorize_with_and_without_signature():
    f = anp.vectorize(lambda a, b: a * anp.sin(b))
    a, b = R(3, 1), R(4)
    np.testing.assert_allclose(f(a, b), a * np.sin(b), rtol=1e-14)
    g = ad.grad(lambda b: anp.sum(f(a, b)))(b)
    np.testing.assert_allclose(g, a.sum() * np.cos(b), rtol=1e-13)
    dot = anp.vectorize(lambda u, v: anp.sum(u * v), signature="(n),(n)->()")
    u, v = R(2, 3, 4), R(4)
    np.testing.assert_allclose(ad.jit(dot, backend="interpret")(u, v), u @ v, rtol=1e-14)
    ex = anp.vectorize(lambda x, p: x ** p, excluded={1})
    np.testing.assert_allclose(ex(np.arange(3.0), 2), np.arange(3.0) ** 2)


def test_svd_keeps_small_singular_values_accurate_in_batches():
    # σ down to 1e-12·σ_max: the Gram matrix would lose them entirely (error ~ ε σ_max²/σ)
    u, _ = np.linalg.qr(RNG.normal(size=(3, 6, 6)))
    v, _ = np.linalg.qr(RNG.normal(size=(3, 4, 4)))
    sv = np.array([1.0, 1e-3, 1e-7, 1e-12])
    a = u[..., :4] @ (sv[:, None] * np.swapaxes(v, -1, -2))
    s = ad.jit(lambda x: anp.linalg.svd(x, compute_uv=False))(a)
    np.testing.assert_allclose(s, np.broadcast_to(sv, (3, 4)), rtol=1e-3, atol=1e-15)
    np.testing.assert_allclose(s[:, :3], np.broadcast_to(sv[:3], (3, 3)), rtol=1e-8)
    uu, ss, vt = ad.jit(lambda x: tuple(anp.linalg.svd(x, full_matrices=False)), backend="interpret")(a)
    np.testing.assert_allclose((uu * ss[..., None, :]) @ vt, a, atol=1e-14)
    np.testing.assert_allclose(np.swapaxes(uu, -1, -2) @ uu, np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-12)
    np.testing.assert_allclose(vt @ np.swapaxes(vt, -1, -2), np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_svd_vectors_derivatives(shape):
    a = R(*shape)
    # sign-invariant functions of the factors: U diag(s) Vᵀ and |U|, |V|
    ad.check_grads(lambda x: (lambda u, s, vt: (u * s[..., None, :]) @ vt)(*anp.linalg.svd(x, full_matrices=False)),
                   (a,), order=2, atol=1e-5, rtol=1e-5)
    ad.check_grads(lambda x: anp.abs(anp.linalg.svd(x, full_matrices=False)[0]), (a,), order=1, atol=1e-5, rtol=1e-5)
    ad.check_grads(lambda x: anp.abs(anp.linalg.svd(x, full_matrices=False)[2]), (a,), order=1, atol=1e-5, rtol=1e-5)
    u, s, vt = ad.jit(lambda x: tuple(anp.linalg.svd(x)), backend="interpret")(a)
    m, n = shape[-2:]
    assert u.shape[-2:] == (m, m) and vt.shape[-2:] == (n, n)
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(m), u.shape), atol=1e-12)
    np.testing.assert_allclose(vt @ np.swapaxes(vt, -1, -2), np.broadcast_to(np.eye(n), vt.shape), atol=1e-12)


def test_svd_degenerate_singular_values_have_finite_exact_value_derivatives():
    a = np.diag([2.0, 2.0, 1.0])
    t = R(3, 3)
    _, ds = ad.jvp(lambda x: anp.linalg.svd(x, compute_uv=False), (a,), (t,))
    # the sum of a degenerate pair's derivatives is the trace of the block (invariant)
    np.testing.assert_allclose(ds.sum(), np.trace(t), rtol=1e-12)
    g = ad.grad(lambda x: anp.sum(anp.linalg.svd(x, full_matrices=False)[0]))(a)
    assert np.all(np.isfinite(g))


def test_pinv_derivative_on_rank_deficient_matrices_along_constant_rank():
    # A(t) = B(t) C(t) keeps rank 2: the Golub–Pereyra derivative is exact along it
    B, C, dB, dC = R(4, 2), R(2, 3), R(4, 2), R(2, 3)
    h = 1e-6
    fd = (np.linalg.pinv((B + h * dB) @ (C + h * dC)) - np.linalg.pinv((B - h * dB) @ (C - h * dC))) / (2 * h)
    _, d = ad.jvp(anp.linalg.pinv, (B @ C,), (dB @ C + B @ dC,))
    np.testing.assert_allclose(d, fd, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ad.jit(anp.linalg.pinv, backend="interpret")(B @ C), np.linalg.pinv(B @ C), atol=1e-12)


def test_eigh_upper_reads_only_the_upper_triangle():
    a = R(3, 3)
    g = ad.grad(lambda x: anp.sum(anp.linalg.eigvalsh(x, UPLO="U") * np.array([1.0, 2.0, 3.0])))(a)
    assert np.all(np.tril(g, -1) == 0)
    w, v = ad.jit(lambda x: tuple(anp.linalg.eigh(x, UPLO="U")), backend="interpret")(a)
    np.testing.assert_allclose(w, np.linalg.eigh(a, UPLO="U")[0], rtol=1e-12)


def test_roots_of_traced_coefficients_raise_typed_errors_for_what_they_cannot_return():
    p = np.array([1.0, 0.0, 1.0])                       # x² + 1: roots ±i
    np.testing.assert_allclose(np.sort_complex(anp.roots(p)), [-1j, 1j])   # concrete: numpy's own
    # under jit the dtype cannot depend on the values: real coefficients, real roots
    with pytest.raises(ad.errors.UnsupportedError, match="complex roots"):
        ad.jit(anp.roots)(p)
    with pytest.raises(ad.errors.UnsupportedError, match="leading coefficient"):
        ad.jit(anp.roots)(np.array([0.0, 1.0, -2.0]))
    # the implicit-function derivative at a simple root: dr/dp_k = -r^(n-k) / p'(r)
    q = np.poly([0.5, 2.0])
    J = ad.jacrev(anp.roots)(q)
    r = np.roots(q)
    want = -np.stack([r ** 2, r, np.ones(2)], axis=1) / np.polyval(np.polyder(q), r)[:, None]
    np.testing.assert_allclose(J, want, rtol=1e-12)
