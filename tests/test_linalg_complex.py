"""Complex linear algebra (issue 16, item 4): values against numpy, derivatives against
finite differences in both real directions of every complex input, ``grad`` against JAX.

Conventions (JAX's, docs/complex.md): the tangent of a complex input is complex, a real
direction ``t`` and an imaginary one ``1j·t`` are two separate real directions, and the
cotangent pairing is ``<u, v> = Re(sum(u * v))`` without conjugation, so for every
function ``Re(sum(ct * jvp(t))) == Re(sum(vjp(ct) * t))``. ``grad`` of a real function
is the conjugate of ``df/dx + i·df/dy`` (JAX's output).

The JAX numbers below were computed once with jax 0.10.2 (``jax_enable_x64``) on these
inputs and written here, so the suite needs no jax; ``test_live_jax_cross_check`` repeats
the comparison when jax imports.
"""
import numpy as np
import pytest
import scipy.linalg

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import UnsupportedError
from autodiff.scipy import linalg as asl
from jit_util import assert_compiled

RNG = np.random.default_rng(1616)
EPS = 1e-6


def crand(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


def herm(x):
    return (x + np.conj(np.swapaxes(x, -1, -2))) / 2


# the inputs the JAX gradients were computed on
A = np.array([[ 1.4-0.7j,  0.6+0.1j,  1. -0.9j],
 [ 1. -0.2j,  3.8+1.1j, -0.4+0.6j],
 [ 0.5+0.6j, -0.4+0.3j,  0.6-0.2j]])
B = np.array([[-1.9-1.3j,  1. +0.8j, -1.5-1.7j],
 [ 0.2+1.2j, -0.1-0.5j,  0.1+0.4j],
 [ 0.3+1.5j, -0.3-2.2j,  0.9-0.3j]])
M = np.array([[1.2+0.j , 1.5-0.5j, 1.7+0.9j],
 [1.5+0.5j, 1. +0.j , 0.2+0.5j],
 [1.7-0.9j, 0.2-0.5j, 2. +0.j ]])
X = np.array([[-1. +2.j ,  0.5-1.1j, -0.2-0.5j],
 [-0.4-0.1j,  0.7-1.j , -1.1-0.3j],
 [ 2.3+0.6j,  0. +0.2j, -0.3+0.j ]])
JAX_GRADS = {
    "tr_inv": np.array([
        [complex(-1.937968852024074, -6.060692669782909), complex(2.694076358804754, 1.7274266370213656), complex(-1.5779588485852536, 7.649765601806877)],
        [complex(3.5583508604460454, -0.12129864203428581), complex(-1.2689823217258345, 1.0793336368373694), complex(-3.4152711148028154, -1.5853857142008567)],
        [complex(8.660018079894959, 11.06922452725886), complex(-6.6057189756072905, -1.1379313919608152), complex(-4.41404225285573, -15.287163873674114)],
    ]),
    "abs_det2": np.array([
        [complex(-5.1586399999999974, 11.244280000000002), complex(0.0012799999999980605, -5.77548), complex(13.809399999999997, -3.4594200000000037)],
        [complex(-2.5285800000000007, -3.4886399999999993), complex(4.464199999999999, -0.23765999999999998), complex(0.4146600000000009, 3.1834599999999993)],
        [complex(-4.216060000000008, -27.680959999999992), complex(8.758080000000001, 7.924439999999996), complex(-3.501499999999993, 27.020279999999996)],
    ]),
    "eigvals2": np.array([
        [complex(2.5616224434770514, -0.07211683572507865), complex(0.9527737532013232, -1.5370540335776162), complex(1.027169605992851, 1.2388771781585086)],
        [complex(1.0764714151498427, -1.0543788460199988), complex(7.971826767051642, -1.3247316698832297), complex(-0.12441534384369132, 0.7608140528290709)],
        [complex(2.3856591934872053, -1.348505798207698), complex(-0.5596374084053625, 1.634504222849415), complex(1.0665507894713098, 0.9968485056083083)],
    ]),
    "rayleigh": np.array([
        [complex(0.1422683878751037, 0.0), complex(-0.6131319967414248, 0.15698450815146592), complex(-0.1814800825758593, 0.5411109413184305)],
        [complex(-0.6131319967414248, -0.15698450815146592), complex(0.7265423538023467, 0.0), complex(-0.33418906668779863, 0.09465305243501454)],
        [complex(-0.1814800825758593, -0.5411109413184305), complex(-0.33418906668779863, -0.09465305243501454), complex(0.13118925832255046, 0.0)],
    ]),
    "chol": np.array([
        [complex(0.48376870025026353, 0.0), complex(0.21048492275058273, -0.8941554492538448), complex(-0.7737067833822097, 0.5488810707548949)],
        [complex(0.2104849227505827, 0.8941554492538448), complex(-0.08254363784636454, 0.0), complex(-0.435034819048399, 1.2358265187506348)],
        [complex(-0.7737067833822097, -0.5488810707548949), complex(-0.435034819048399, -1.2358265187506348), complex(0.14501448850579501, 0.0)],
    ]),
    "solve": np.array([
        [complex(-11.063365788742544, -1.402714897766201), complex(4.465308010191504, -2.6692490445443418), complex(8.777727743209134, 6.996846404459314)],
        [complex(-0.43507818904774503, 0.7971818400566639), complex(-0.06971574677240863, -0.4178839666044267), complex(0.7913312863574563, -0.4576619965638945)],
        [complex(4.800490612779991, -12.44386346676976), complex(1.8191865587992477, 5.95005076814347), complex(-10.640735953671925, 8.186158776280228)],
    ]),
    "logabsdet": np.array([
        [complex(0.51040590153364, 1.375721726948057), complex(-0.48428526114517845, -0.4844999697227359), complex(0.8680583920105593, -1.4483452258960687)],
        [complex(-0.5046674793162673, -0.08052074881629318), complex(0.35448218413642457, -0.39434752831008074), complex(0.30177626057838147, 0.23222074591437256)],
        [complex(-2.6752202314524927, -1.968013789658394), complex(1.399171929403149, -0.06991783538863683), complex(1.9725327342516719, 2.5598781126243786)],
    ]),
    "nuclear": np.array([
        [complex(0.41837553626838186, 0.4786067622978806), complex(0.0714366985524298, -0.14303276565251066), complex(0.6849967291230944, 0.31798645391788294)],
        [complex(0.1113472213245292, -0.054574150593494325), complex(0.9456750692384694, -0.24629602044646987), complex(-0.1248654296587796, -0.11861288546984396)],
        [complex(0.125665511340474, -0.7514846075500992), complex(0.07306172349035228, 0.1189005649414315), complex(0.1847212786505127, 0.6048816027172247)],
    ]),
    "eigvec_proj": np.array([
        [complex(-0.05303693495869341, -0.03118834580175142), complex(-0.1869018386326406, -0.17004090737575894), complex(0.02834741256869648, -0.02010140962611849)],
        [complex(-0.00033677252984446945, 0.019571507571617436), complex(-0.017842087389595605, 0.07838218475414231), complex(-0.010004590781269277, -0.004705109101805108)],
        [complex(-0.12765885568540747, -0.08020858472156385), complex(-0.44553969440819585, -0.42994025906719296), complex(0.07087902234828902, -0.047193838952390925)],
    ]),
    "jacfwd_inv": np.array([
        [complex(-0.3676901407856211, 0.07340555806921381), complex(0.14319576841390586, -0.3617211307181041), complex(0.26684349876402885, 0.08272137063026358)],
        [complex(0.04063620333777697, -0.12410283684474929), complex(0.08523560108907446, 0.10532439430201818), complex(-0.07074675448115095, 0.06679903819593874)],
        [complex(0.604301647385804, -0.5958153533994632), complex(0.17867032969485191, 0.8621996421615868), complex(-0.6075707399214589, 0.1751521637335612)],
    ]),
    "jacrev_inv": np.array([
        [complex(-0.36769014078562107, 0.07340555806921378), complex(0.14319576841390583, -0.36172113071810397), complex(0.2668434987640288, 0.08272137063026355)],
        [complex(0.04063620333777698, -0.12410283684474928), complex(0.08523560108907445, 0.1053243943020182), complex(-0.07074675448115095, 0.06679903819593871)],
        [complex(0.604301647385804, -0.5958153533994631), complex(0.1786703296948518, 0.8621996421615871), complex(-0.6075707399214589, 0.17515216373356113)],
    ]),
}


def hpd(x):
    """A Hermitian positive definite matrix from any square x."""
    return x @ np.conj(x.T) + np.eye(x.shape[-1])


H = hpd(X)


# ---------------------------------------------------------------------------- helpers

def _real_dirs(x):
    """The real directions of input ``x``: t and 1j·t for a complex x, t for a real one."""
    t = RNG.normal(size=np.shape(x))
    return (t, 1j * t) if np.iscomplexobj(x) else (t,)


def _flat(out):
    leaves = out if isinstance(out, (tuple, list)) else (out,)
    return np.concatenate([np.ravel(np.asarray(v)).astype(complex) for v in leaves])


def check_derivatives(f, args, ref=None, tol=1e-7, dirs=None):
    """jvp of ``f`` against central differences of ``ref`` (numpy's function; ``f`` itself by
    default) in each real direction of each argument, and vjp against jvp through the
    pairing Re(sum(ct·t))."""
    ref = ref or f
    out = f(*args)
    ct = [crand(*np.shape(v)) if np.iscomplexobj(v) else RNG.normal(size=np.shape(v))
          for v in (out if isinstance(out, (tuple, list)) else (out,))]
    ct_tree = type(out)(ct) if isinstance(out, (tuple, list)) and not hasattr(out, "_fields") \
        else (type(out)(*ct) if hasattr(out, "_fields") else ct[0])
    _, vjp_fn = ad.vjp(f, *args)
    cts = vjp_fn(ct_tree)
    for i, x in enumerate(args):
        for t in (dirs[i] if dirs else _real_dirs(x)):
            tangents = tuple(t if j == i else np.zeros_like(a) for j, a in enumerate(args))
            _, tan = ad.jvp(f, tuple(args), tangents)
            up = [a + EPS * t if j == i else a for j, a in enumerate(args)]
            dn = [a - EPS * t if j == i else a for j, a in enumerate(args)]
            fd = (_flat(ref(*up)) - _flat(ref(*dn))) / (2 * EPS)
            scale = max(1.0, np.max(np.abs(fd)))
            np.testing.assert_allclose(_flat(tan), fd, atol=tol * scale, rtol=0,
                                       err_msg=f"jvp, argument {i}")
            lhs = np.real(np.sum(_flat(ct_tree) * _flat(tan)))
            rhs = np.real(np.sum(np.asarray(cts[i]) * t))
            assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs)), (i, lhs, rhs)


# ----------------------------------------------------------------------- derivatives

def _proj(v, k=0):
    """The projector onto eigenvector k: invariant under the vector's phase (the gauge)."""
    return v[:, k:k + 1] @ np.conj(v[:, k:k + 1]).T


CASES = {
    "solve": (lambda a, b: anp.linalg.solve(a, b), (A, B[:, :2])),
    "solve_vec": (lambda a, b: anp.linalg.solve(a, b), (A, B[:, 0])),
    "inv": (anp.linalg.inv, (A,)),
    "det": (anp.linalg.det, (A,)),
    "slogdet": (lambda a: tuple(anp.linalg.slogdet(a)), (A,)),
    "cholesky": (anp.linalg.cholesky, (H,)),
    "cholesky_upper": (lambda a: anp.linalg.cholesky(a, upper=True), (H,)),
    "eigvalsh": (anp.linalg.eigvalsh, (H,)),
    "eigvalsh_U": (lambda a: anp.linalg.eigvalsh(a, UPLO="U"), (H,)),
    "eigh_projector": (lambda a: (lambda wv: wv[1][:, :1] @ anp.conj(wv[1][:, :1]).T)(anp.linalg.eigh(a)),
                       (H,)),
    "svd": (lambda a: tuple(anp.linalg.svd(a, full_matrices=False)), (A,)),
    "svd_wide": (lambda a: tuple(anp.linalg.svd(a, full_matrices=False)), (A[:2],)),
    "svdvals_tall": (lambda a: anp.linalg.svd(a, compute_uv=False), (B[:, :2],)),
    "qr": (lambda a: tuple(anp.linalg.qr(a)), (A,)),
    "qr_tall": (lambda a: tuple(anp.linalg.qr(a)), (B[:, :2],)),
    "pinv": (anp.linalg.pinv, (B[:, :2],)),
    "lstsq": (lambda a, b: anp.linalg.lstsq(a, b)[0], (B[:, :2], X[:, 0])),
    "matrix_power": (lambda a: anp.linalg.matrix_power(a, -2), (A,)),
    "norm_fro": (anp.linalg.norm, (A,)),
    "norm_2": (lambda a: anp.linalg.norm(a, 2), (A,)),
    "norm_nuc": (lambda a: anp.linalg.norm(a, "nuc"), (A,)),
    "norm_1": (lambda a: anp.linalg.norm(a, 1), (A,)),
    "norm_vec": (lambda v: anp.linalg.norm(v, 3), (X[0],)),
    "solve_triangular_N": (lambda a, b: anp.linalg.solve_triangular(a, b, lower=True), (A, B)),
    "solve_triangular_T": (lambda a, b: anp.linalg.solve_triangular(a, b, trans=1), (A, B)),
    "solve_triangular_C": (lambda a, b: anp.linalg.solve_triangular(a, b, trans="C", lower=True), (A, B)),
    "cho_solve": (lambda a, b: asl.cho_solve(asl.cho_factor(a), b), (H, B[:, 0])),
    "cho_solve_lower": (lambda a, b: asl.cho_solve(asl.cho_factor(a, lower=True), b), (H, B)),
    "solve_her": (lambda a, b: asl.solve(a, b, assume_a="her"), (A, B)),
    "eig": (lambda a: tuple(anp.linalg.eig(a)), (A,)),
    "eig_real": (lambda a: tuple(anp.linalg.eig(a)), (np.real(A) + np.array([[0, 2, 0], [-2, 0, 0], [0, 0, 1.0]]),)),
    "eigvals": (anp.linalg.eigvals, (A,)),
    "expm": (asl.expm, (0.5 * A,)),
    "inv_scipy": (asl.inv, (A,)),
    "eigh_scipy_generalized": (lambda a, b: asl.eigh(a, b, eigvals_only=True), (H, hpd(A))),
    "eigh_scipy_upper": (lambda a: asl.eigh(a, lower=False, eigvals_only=True), (H,)),
    "qr_scipy": (lambda a: tuple(asl.qr(a)), (A,)),
    "det_scipy": (asl.det, (A,)),
}


def _complex_eig(a):
    # the traced eig is always complex; numpy's is real when every eigenvalue is
    w, v = np.linalg.eig(a)
    return w.astype(complex), v.astype(complex)


REFS = {"eig_real": lambda a: _complex_eig(a), "eigvals": lambda a: np.linalg.eigvals(a).astype(complex),
        "eigh_scipy_generalized": lambda a, b: scipy.linalg.eigh(a, b, eigvals_only=True),
        "eigh_scipy_upper": lambda a: scipy.linalg.eigh(a, lower=False, eigvals_only=True),
        "qr_scipy": lambda a: scipy.linalg.qr(a)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_and_vjp_against_finite_differences(name):
    f, args = CASES[name]
    check_derivatives(f, args, REFS.get(name))


def test_schur_complex_derivative_of_gauge_invariant_functions():
    # T's diagonal (the eigenvalues), |T| and the first Schur vector's projector do not
    # depend on the phases of the Schur vectors
    def g(x):
        t, z = asl.schur(x, output="complex")
        return anp.diagonal(t), anp.abs(t), z[:, :1] @ anp.conj(z[:, :1]).T

    def g_ref(x):
        t, z = scipy.linalg.schur(x, output="complex")
        return np.diagonal(t), np.abs(t), z[:, :1] @ np.conj(z[:, :1]).T
    check_derivatives(g, (A,), g_ref)
    check_derivatives(g, (np.real(A),), g_ref)       # a real input, complex form


def test_rsf2csf_values_and_derivative_along_real_schur_forms():
    a = np.real(A) + np.array([[0, 2, 0], [-2, 0, 0], [0, 0, 1.0]])
    T, Z = scipy.linalg.schur(a)
    assert abs(T[1, 0]) > 1e-3 or abs(T[2, 1]) > 1e-3           # one 2x2 block
    t_ref, z_ref = scipy.linalg.rsf2csf(T, Z)
    for t, z in (asl.rsf2csf(T, Z), ad.jit(asl.rsf2csf, backend="interpret")(T, Z)):
        np.testing.assert_allclose(t, t_ref, atol=1e-14)
        np.testing.assert_allclose(z, z_ref, atol=1e-14)
    # directions that keep T a real Schur form (its zero pattern): scipy's block test
    # sees the same blocks on both sides of the difference
    pattern = np.triu(np.ones_like(T)) + np.diag((np.abs(np.diag(T, -1)) > 0).astype(float), -1)
    dirs = [(RNG.normal(size=T.shape) * pattern,), (RNG.normal(size=Z.shape),)]
    check_derivatives(lambda t, z: tuple(asl.rsf2csf(t, z)), (T, Z),
                      lambda t, z: scipy.linalg.rsf2csf(t, z), dirs=dirs)


def test_eig_gauge_is_numpys():
    # unit norm and the largest-modulus component real: the derivative of v itself matches
    # numpy's, and so ‖v_k‖ stays 1 and that component stays real to first order
    w, v = np.linalg.eig(A)
    t = crand(3, 3)
    _, (dw, dv) = ad.jvp(lambda a: tuple(anp.linalg.eig(a)), (A,), (t,))
    np.testing.assert_allclose(np.real(np.sum(np.conj(v) * dv, axis=0)), 0, atol=1e-12)
    j = np.argmax(np.abs(v), axis=0)
    np.testing.assert_allclose(np.imag(dv[j, np.arange(3)] / v[j, np.arange(3)]), 0, atol=1e-12)
    # and the eigenvalue tangent is diag(V⁻¹ dA V)
    np.testing.assert_allclose(dw, np.diag(np.linalg.solve(v, t @ v)), atol=1e-12)


# ------------------------------------------------------------------ grad against JAX

def _herm_anp(x):
    return (x + anp.conj(anp.swapaxes(x, -1, -2))) / 2


GRAD_FUNCS = {
    "tr_inv": (lambda a: anp.real(anp.trace(anp.linalg.inv(a) @ B)), A),
    "abs_det2": (lambda a: anp.abs(anp.linalg.det(a)) ** 2, A),
    "eigvals2": (lambda a: anp.sum(anp.abs(anp.linalg.eigvals(a)) ** 2), A),
    # Rayleigh quotient v0ᴴ M v0 of eigh's first eigenvector plus the largest eigenvalue
    "rayleigh": (lambda x: (lambda wv: anp.real(anp.vdot(wv[1][:, 0], M @ wv[1][:, 0])) + wv[0][2])(
        anp.linalg.eigh(_herm_anp(x) + 3 * np.eye(3))), X),
    "chol": (lambda x: anp.real(anp.sum(anp.linalg.cholesky(
        _herm_anp(x) @ anp.conj(_herm_anp(x).T) + np.eye(3)) * B)), X),
    "solve": (lambda a: anp.real(anp.sum(anp.linalg.solve(a, B[:, 0]) * M[0])), A),
    "logabsdet": (lambda a: anp.linalg.slogdet(a)[1] + anp.angle(anp.linalg.slogdet(a)[0]), A),
    "nuclear": (lambda a: anp.sum(anp.linalg.svd(a, compute_uv=False)), A),
    "eigvec_proj": (lambda a: anp.real(anp.sum((lambda v: v[:, :1] @ anp.conj(v[:, :1]).T / anp.vdot(
        v[:, 0], v[:, 0]))(anp.linalg.eig(a)[1]) * B)), A),
}


@pytest.mark.parametrize("name", sorted(GRAD_FUNCS))
def test_grad_matches_jax(name):
    f, x = GRAD_FUNCS[name]
    np.testing.assert_allclose(ad.grad(f)(x), JAX_GRADS[name], rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", ["tr_inv", "abs_det2", "eigvals2", "rayleigh", "chol", "logabsdet"])
def test_second_order_jvp_of_grad_against_finite_differences(name):
    # the rules are written with the library's own ops: their derivatives differentiate again
    f, x = GRAD_FUNCS[name]
    g = ad.grad(f)
    for t in _real_dirs(x):
        _, tan = ad.jvp(g, (x,), (t,))
        fd = (g(x + EPS * t) - g(x - EPS * t)) / (2 * EPS)
        np.testing.assert_allclose(tan, fd, atol=1e-6 * max(1.0, np.max(np.abs(fd))))


def test_holomorphic_jacobians_match_jax():
    np.testing.assert_allclose(ad.jacfwd(anp.linalg.inv, holomorphic=True)(A)[0, 1],
                               JAX_GRADS["jacfwd_inv"], atol=1e-10)
    np.testing.assert_allclose(ad.jacrev(anp.linalg.inv, holomorphic=True)(A)[0, 1],
                               JAX_GRADS["jacrev_inv"], atol=1e-10)
    # d inv(A)/dA_kl = -inv(A) e_k e_lᵀ inv(A): the closed form
    Ai = np.linalg.inv(A)
    np.testing.assert_allclose(JAX_GRADS["jacfwd_inv"], -np.einsum("k,l->kl", Ai[0], Ai[:, 1]),
                               atol=1e-12)


@pytest.mark.slow          # importing jax costs ~5 s; the written numbers above always run
def test_live_jax_cross_check():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    f = lambda a: jnp.sum(jnp.abs(jnp.linalg.eigvals(a)) ** 2) + jnp.abs(jnp.linalg.det(a)) ** 2  # noqa: E731
    g = lambda a: anp.sum(anp.abs(anp.linalg.eigvals(a)) ** 2) + anp.abs(anp.linalg.det(a)) ** 2  # noqa: E731
    x = crand(3, 3)
    np.testing.assert_allclose(ad.grad(g)(x), np.asarray(jax.grad(f)(x)), atol=1e-10)


# ------------------------------------------------------------------ values, vmap, jit

@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_traced_values_and_dtypes_match_numpy(dtype):
    a, b, h = A.astype(dtype), B.astype(dtype), H.astype(dtype)
    tol = 2e-5 if dtype == np.complex64 else 1e-12
    traced = ad.jit(lambda a, b, h: (anp.linalg.solve(a, b), anp.linalg.inv(a), anp.linalg.det(a),
                                     tuple(anp.linalg.slogdet(a)), anp.linalg.cholesky(h),
                                     anp.linalg.eigvalsh(h), anp.linalg.svd(a, compute_uv=False),
                                     tuple(anp.linalg.qr(a)), anp.linalg.pinv(a), anp.linalg.norm(a),
                                     anp.linalg.norm(a, 2), anp.linalg.matrix_power(a, 3),
                                     anp.linalg.eigvals(a), asl.expm(0.5 * a)), backend="interpret")
    out = traced(a, b, h)
    ref = (np.linalg.solve(a, b), np.linalg.inv(a), np.linalg.det(a), tuple(np.linalg.slogdet(a)),
           np.linalg.cholesky(h), np.linalg.eigvalsh(h), np.linalg.svd(a, compute_uv=False),
           tuple(np.linalg.qr(a)), np.linalg.pinv(a), np.linalg.norm(a), np.linalg.norm(a, 2),
           np.linalg.matrix_power(a, 3), np.linalg.eigvals(a), scipy.linalg.expm(0.5 * a))
    for got, want in zip(ad.tree_util.tree_leaves(out), ad.tree_util.tree_leaves(ref)):
        assert np.asarray(got).dtype == np.asarray(want).dtype, (got, want)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
    # eigh: real eigenvalues, eigenvectors of the input's dtype; slogdet: real log|det|
    w, v = ad.jit(anp.linalg.eigh, backend="interpret")(h)
    assert w.dtype == np.dtype(dtype).type(0).real.dtype and v.dtype == dtype
    np.testing.assert_allclose(v @ np.diag(w) @ np.conj(v.T), h, atol=tol * 100)


def _prims(a, b, h):
    # every linalg primitive with a Numba lowering (eig: LAPACK on the host inside the kernel)
    return (anp.linalg.solve(a, b), anp.linalg.inv(a), tuple(anp.linalg.slogdet(a)),
            anp.linalg.cholesky(h), tuple(anp.linalg.eigh(h)),
            anp.linalg.solve_triangular(a, b, lower=True, trans="C"), tuple(anp.linalg.eig(a)),
            # a non-Hermitian input: both read the lower triangle (and the diagonal's real part)
            anp.linalg.eigvalsh(a), anp.linalg.cholesky(h + anp.triu(a, 1)))


JIT_PRIMS = ad.jit(_prims)


# complex64 compiles every helper a second time (~10 s): slow, CI runs it
@pytest.mark.parametrize("dtype", [pytest.param(np.complex64, marks=pytest.mark.slow), np.complex128])
def test_jit_compiles_and_matches_the_interpreter(dtype):
    a, b, h = A.astype(dtype), B.astype(dtype), H.astype(dtype)
    tol = 2e-5 if dtype == np.complex64 else 1e-12
    got = assert_compiled(JIT_PRIMS, a, b, h)
    want = ad.jit(_prims, backend="interpret")(a, b, h)
    for g, w in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * 10)
    # against numpy directly where the interpreter could share a mistake
    np.testing.assert_allclose(got[3], np.linalg.cholesky(h), rtol=tol, atol=tol)
    np.testing.assert_allclose(got[2][0], np.linalg.slogdet(a)[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(got[5], scipy.linalg.solve_triangular(a, b, lower=True, trans="C"),
                               rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(got[7], np.linalg.eigvalsh(a), rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(got[8], np.linalg.cholesky(h + np.triu(a, 1)), rtol=tol, atol=tol * 10)


@pytest.mark.slow          # ~20 s of Numba compiles: the compositions' kernels are long
def test_jit_compositions_compile_and_match_numpy():
    cases = [(lambda a: tuple(anp.linalg.qr(a)), lambda a: tuple(np.linalg.qr(a))),
             (lambda a: anp.linalg.svd(a, compute_uv=False), lambda a: np.linalg.svd(a, compute_uv=False)),
             (anp.linalg.pinv, np.linalg.pinv), (asl.expm, scipy.linalg.expm),
             (lambda a: asl.schur(a, output="complex")[0], lambda a: scipy.linalg.schur(a, output="complex")[0])]
    for f, ref in cases:
        got = assert_compiled(ad.jit(f), A)
        for g, w in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(ref(A))):
            np.testing.assert_allclose(g, w, atol=1e-12)


JIT_GRAD = ad.jit(ad.grad(lambda a: GRAD_FUNCS["abs_det2"][0](a) + GRAD_FUNCS["tr_inv"][0](a)
                          + GRAD_FUNCS["eigvals2"][0](a)))


def test_jit_grad_matches_jax():
    np.testing.assert_allclose(assert_compiled(JIT_GRAD, A),
                               JAX_GRADS["abs_det2"] + JAX_GRADS["tr_inv"] + JAX_GRADS["eigvals2"],
                               atol=1e-10)


def test_vmap_matches_a_loop():
    As = np.stack([A, 2 * A + np.eye(3)])
    Hs = np.stack([H, hpd(A)])
    Bs = np.stack([B, B.T])
    for f, args in ((anp.linalg.solve, (As, Bs)), (anp.linalg.inv, (As,)),
                    (lambda a: tuple(anp.linalg.slogdet(a)), (As,)), (anp.linalg.cholesky, (Hs,)),
                    (anp.linalg.eigvalsh, (Hs,)), (anp.linalg.eigvals, (As,)),
                    (lambda a: tuple(anp.linalg.eig(a)), (As,)),
                    (lambda a: tuple(anp.linalg.qr(a)), (As,)),
                    (lambda a: tuple(anp.linalg.svd(a, full_matrices=False)), (As,)),
                    (lambda a, b: anp.linalg.solve(A, b), (As, Bs))):
        got = ad.vmap(f)(*args)
        for i in range(2):
            want = f(*(x[i] for x in args))
            for g, w in zip(ad.tree_util.tree_leaves(got), ad.tree_util.tree_leaves(want)):
                np.testing.assert_allclose(np.asarray(g)[i], w, atol=1e-12)


def test_svd_phase_convention_and_reconstruction():
    # every mode: the largest-modulus entry of each column of U is real and positive
    for u, s, vh in (anp.linalg.svd(A), ad.jit(lambda a: tuple(anp.linalg.svd(a)), backend="interpret")(A)):
        j = np.argmax(np.abs(u), axis=0)
        top = u[j, np.arange(3)]
        np.testing.assert_allclose(np.imag(top), 0, atol=1e-14)
        assert np.all(np.real(top) > 0)
        np.testing.assert_allclose((u * s) @ vh, A, atol=1e-13)
        assert s.dtype == np.float64


def test_complex_input_to_an_unsupported_scipy_function_is_an_error():
    # instead of numpy's silent drop of the imaginary part
    with pytest.raises(UnsupportedError, match="eigh_tridiagonal.*complex"):
        asl.eigh_tridiagonal(np.ones(3) + 1j, np.ones(2))
    with pytest.raises(ValueError, match="real.*complex"):
        asl.schur(A, output="nope")
