"""Complex differentiation against JAX (issue 16): the same functions on the same inputs
give JAX's outputs (x64) to 1e-10.

Each function is written once against a numpy namespace ``xp`` (``autodiff.numpy`` or
``jax.numpy``), so both libraries run the same code. JAX is a peer for the bench extra,
not a test dependency: its outputs were computed once with jax 0.10.2 (x64) by running
this file as a script (``python tests/test_complex_vs_jax.py`` prints ``JAX``) and are
written below as numbers (Python's repr: every float64 exactly). ``test_live_jax``
recomputes them when jax imports. Inputs are fixed numbers (drawn once from
``np.random.default_rng(16)``, rounded to 3 decimals).

Conventions checked: ``grad`` of a real function of complex inputs is the cotangent of
1.0, conj(∂f/∂x + i ∂f/∂y); ``holomorphic=True`` Jacobians are f'(z); a ``vjp`` is the
transpose under the pairing Re(Σ u·v), no conjugation (docs/complex.md).
"""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from jit_util import assert_compiled

# ---- inputs ------------------------------------------------------------------------
Z = np.array([(-0.595-0.385j), (0.631+0.544j), (1.039-0.366j), (1.031-1.425j),
              (1.818-0.704j)])
W = np.array([0.655, 1.192, 1.459, 1.485, 1.163])
PSI = np.array([(0.572+0.991j), (0.345-1.507j), (-0.175+0.216j), (-1.868-0.108j)])
_HA = np.array([(0.137+0.606j), (0.252+0.514j), (-0.334+0.106j), (0.901+0.266j),
                (-1.285+0.071j), (0.792+0.992j), (-1.692+0.159j), (1.186+0.669j),
                (-0.509+1.616j), (0.374+1.17j), (1.508-0.344j), (-2.163-0.103j),
                (-0.315+0.735j), (0.573-0.642j), (0.899-1.831j), (1.358-1.011j)]).reshape(4, 4)
H = 0.5 * (_HA + _HA.conj().T)                        # Hermitian
U = np.array([0.539, -0.211, -0.357, 0.747, -1.052, 2.265, 0.023, -0.324, 2.037, -1.089,
              -0.497, -0.089, -0.96, -0.34, 0.583, 0.169])
ZH = np.array([(1.354-0.54j), (0.82-0.839j), (0.448+0.076j), (1.41+0.151j)])   # Re z > 0
A = np.array([(-0.983+0.308j), (-0.452+0.083j), (-0.21-2.522j), (-1.393-0.645j),
              (1.234-1.225j), (0.891-1.407j), (-0.013-0.754j), (-0.948-1.17j),
              (1.346+0.326j), (0.641+0.465j), (1.063+0.269j), (-0.419-0.829j),
              (2.396-0.482j), (-0.139+1.678j), (1.955-0.345j), (-2.005-0.021j)]).reshape(4, 4)
X8 = np.array([(-0.588-0.989j), (0.527+0.101j), (0.885+0.865j), (0.796-1.015j),
               (0.426+0.779j), (0.71+0.318j), (-0.213-1.225j), (0.621-1.703j)])
CT8 = np.array([(-1.652-1.49j), (-1.046-2.031j), (0.319-0.691j), (0.248-0.541j),
                (1.228+1.276j), (2.269-1.509j), (-0.479-0.249j), (-2.039-0.255j)])
CT10 = np.array([(-0.133-0.513j), (-0.575-0.083j), (2.11+0.891j), (-0.189-0.611j),
                 (0.034-1.968j), (0.703+0.066j), (0.217-1.053j), (1.772+0.612j),
                 (-1.209+0.222j), (-0.201+2.092j)])
R8 = np.array([0.536, -0.832, 0.363, 1.063, 0.08, -0.034, -0.271, -0.413])
R9 = np.array([-0.327, 0.127, 0.859, -1.229, 0.094, -0.242, -0.384, 0.706, 1.644])
X34 = np.array([(-0.922-0.128j), (1.207-1.647j), (0.397-1.266j), (-1.432+0.218j),
                (1.074+1.427j), (0.022-1.933j), (0.227-0.581j), (0.155+0.325j),
                (1.189+0.251j), (-2.227+0.561j), (-0.018+1.182j), (0.556+0.795j)]).reshape(3, 4)
CT34 = np.array([(-1.446+0.648j), (-0.272+0.817j), (-1.067+0.662j), (0.02-0.879j),
                 (1.542-1.005j), (1.061-1.076j), (2.355+1.906j), (1.42-0.053j),
                 (1.137+0.891j), (1.072+0.002j), (-0.627-0.111j), (-0.086-0.178j)]).reshape(3, 4)
K16 = 2 * np.pi * np.fft.rfftfreq(16, d=2 * np.pi / 16)   # wavenumbers 0..8 on [0, 2π)


# ---- the functions, written once for either namespace --------------------------------
def abs2(xp, z):
    return xp.sum(xp.abs(z) ** 2)


def abs_angle(xp, z, w):
    return xp.sum(w * xp.abs(z)) + xp.sum(xp.angle(z) ** 2)


def mixed(xp, z):
    return xp.sum(xp.real(xp.sin(z) * xp.conj(z)) + xp.imag(xp.exp(z) * z ** 2))


def expectation(xp, psi, h):
    return xp.real(xp.vdot(psi, h @ psi)) / xp.real(xp.vdot(psi, psi))


def heat_step(xp, u, nu):
    """One exact step dt = 0.1 of u_t = ν u_xx in Fourier space; loss Σ u²."""
    u1 = xp.fft.irfft(xp.exp(-0.1 * nu * K16 ** 2) * xp.fft.rfft(u), n=16)
    return xp.sum(u1 ** 2)


def kdv_step(xp, u):
    """One step of u_t + u u_x + u_xxx = 0 in Fourier space (explicit nonlinear term,
    exact dispersion), dt = 0.01; loss Σ u²."""
    dt = 0.01
    uh = xp.fft.rfft(u)
    nonlinear = -0.5j * K16 * xp.fft.rfft(u * u)          # -(u²/2)_x
    u1 = xp.fft.irfft(xp.exp(1j * K16 ** 3 * dt) * (uh + dt * nonlinear), n=16)
    return xp.sum(u1 ** 2)


def holo_sum(xp, z):
    return xp.sum(z ** 2 * xp.sin(z))


GRAD = {                                    # name: (function, arguments, argnums)
    "abs2": (abs2, (Z,), 0),
    "abs_angle": (abs_angle, (Z, W), (0, 1)),
    "mixed": (mixed, (Z,), 0),
    "expectation": (expectation, (PSI, H), 0),
    "heat_step": (heat_step, (U, 0.7), (0, 1)),
    "kdv_step": (kdv_step, (U,), 0),
}

HOLO = {                                    # holomorphic functions of complex z
    "sin_exp": lambda xp, z: xp.sin(z) * xp.exp(z),
    "rational": lambda xp, z: z ** 3 / (1 + z * z),
    "matrix_log": lambda xp, z: A @ (z * z) + z[::-1] * xp.log(z),
    "fft_times": lambda xp, z: xp.fft.fft(z) * z,
}

VJP = {                                     # name: (function, primal, cotangent)
    "fft": (lambda xp, x: xp.fft.fft(x), X8, CT8),
    "ifft": (lambda xp, x: xp.fft.ifft(x), X8, CT8),
    "fft_ortho": (lambda xp, x: xp.fft.fft(x, norm="ortho"), X8, CT8),
    "ifft_forward": (lambda xp, x: xp.fft.ifft(x, norm="forward"), X8, CT8),
    "fft_pad10": (lambda xp, x: xp.fft.fft(x, n=10), X8, CT10),
    "ifft_crop6": (lambda xp, x: xp.fft.ifft(x, n=6), X8, CT8[:6]),
    "rfft": (lambda xp, x: xp.fft.rfft(x), R8, CT8[:5]),
    "irfft": (lambda xp, x: xp.fft.irfft(x), X8[:5], R8),
    "irfft_odd9": (lambda xp, x: xp.fft.irfft(x, n=9), X8[:5], R9),
    "fft2": (lambda xp, x: xp.fft.fft2(x), X34, CT34),
    "ifft2": (lambda xp, x: xp.fft.ifft2(x), X34, CT34),
}


def _grad(lib, name):
    f, args, argnums = GRAD[name]
    xp = anp if lib is ad else lib.numpy
    return lib.grad(lambda *a: f(xp, *a), argnums=argnums), args


def _vjp(lib, name):
    f, x, ct = VJP[name]
    xp = anp if lib is ad else lib.numpy
    return lambda x, ct: lib.vjp(lambda x: f(xp, x), x)[1](ct)[0], (x, ct)


def _holo(lib, name, jac):
    xp = anp if lib is ad else lib.numpy
    return getattr(lib, jac)(lambda z: HOLO[name](xp, z), holomorphic=True)


# ---- JAX's outputs (x64), written by running this file -------------------------------
# BEGIN JAX
JAX = {
    'grad/abs2': np.array([(-1.19+0.77j), (1.262-1.088j), (2.078+0.732j), (2.062+2.85j),
        (3.636+1.408j)]),
    'grad/abs_angle': (np.array([(-4.485830098588458-5.726942956090129j),
        (-0.21245607078126483-2.07195696808907j), (1.1718106881963235+1.0647347650323042j),
        (0.00037051842736768315+1.8326484493325879j), (0.9476579370096895+0.7734133078772351j)]),
        np.array([0.7086959855960805, 0.8331248405851311, 1.1015793207935596, 1.758859289425962,
        1.9495486657172731]),),
    'grad/mixed': np.array([(-1.0026787570400044+1.3688353203490973j),
        (5.263660712136185-1.6474754946148988j), (-5.632737903457019-5.746966065221236j),
        (-4.736116928095471+19.961423538916534j), (-44.187696411108575-13.501266949112853j)]),
    'grad/expectation': np.array([(-0.27451996984660404+0.03193668154969298j),
        (-0.4648098286777181+0.23136809387495538j), (0.22797883759323478+0.10362328720566971j),
        (-0.016220994520474208+0.2994486707708663j)]),
    'grad/heat_step': (np.array([0.35175159698416125, 0.12717754221162472,
        0.053549273580786316, 0.2413902487876739, 0.6570447013155396, 1.0358481076683326,
        1.0568105587077166, 0.8927619241897192, 0.5714052746887703, -0.06662177373772107,
        -0.6390957282819714, -0.8595984694893418, -0.7718094166115339, -0.3613637894289511,
        0.16423944125849899, 0.4345105081566961]), np.float64(-1.7327385923822427),),
    'grad/kdv_step': np.array([1.1628707647617214, -0.45719647090820853, -0.7056799584371641,
        1.373916837477585, -2.167742389050137, 4.7177373138443475, 0.28660131684990287,
        -0.94560870845758, 4.046690549821786, -2.074783517822068, -0.9488497536984158,
        -0.2707025965152583, -1.8410972712679485, -0.7608001888137101, 1.2478302443965446,
        0.2658949226909191]),
    'jac/sin_exp': np.array([[(5.40906340232265-1.2940436090197909j), 0j, 0j, 0j], [0j,
        (3.022109231837099-3.2083617056213196j), 0j, 0j], [0j, 0j,
        (2.0844541828957186+0.21462752109292926j), 0j], [0j, 0j, 0j,
        (4.775725210189293+0.2073223126964997j)]]),
    'jac/rational': np.array([[(1.1786853377922475-0.03101475126854808j), 0j, 0j, 0j], [0j,
        (1.580429618436952-0.17898560050387435j), 0j, 0j], [0j, 0j,
        (0.447030178424117+0.1110766897139424j), 0j], [0j, 0j, 0j,
        (1.1165678683113047+0.015263385654329581j)]]),
    'jac/matrix_log': np.array([[(-1.469242942678205+2.3502414970116465j),
        (-0.6020059999999999+0.894576j), (0.19518399999999997-2.291632j),
        (-3.3566038639083464-2.619073269184919j)], [(2.0186719999999996-4.6500200000000005j),
        (-0.6791208312784589-3.4841987846861304j), (0.2626669985940927-1.4744103450493238j),
        (-2.3200199999999995-3.5856959999999996j)], [(3.9970480000000004-0.5708719999999999j),
        (1.0427341382141107-0.14495497466183693j), (2.381900953118946-1.7196006974041067j),
        (-0.9312219999999999-2.464318j)], [(6.317099440169766-3.786250411241339j),
        (2.5877239999999997+2.985162j), (1.8041200000000002-0.011960000000000026j),
        (-4.7389116669383515-1.1450390753846162j)]]),
    'jac/fft_times': np.array([[(5.386-1.692j), (1.354-0.54j), (1.354-0.54j), (1.354-0.54j)],
        [(0.82-0.839j), (-0.9229999999999998-0.846j), (-0.82+0.839j), (0.839+0.82j)],
        [(0.448+0.076j), (-0.448-0.076j), (0.020000000000000073+0.29999999999999993j),
        (-0.448-0.076j)], [(1.41+0.151j), (-0.151+1.41j), (-1.41-0.151j),
        (2.047-2.6159999999999997j)]]),
    'holo_grad': np.array([(4.098382691737131-1.0507318906401424j),
        (1.4863768110255076-4.048006358680873j), (0.5572572607167801+0.18259620195647264j),
        (3.1900461666673925+0.14485212123897112j)]),
    'vjp/fft': np.array([(-1.152-5.49j), (-7.85455446740577-3.003971429300254j),
        (-3.0079999999999996-2.2880000000000003j), (0.9518699090083098-1.0742170285802035j),
        (-0.015999999999999792+3.1820000000000004j), (1.2105544674057702-4.124028570699746j),
        (2.48+3.74j), (-5.827869909008309-2.8617829714197964j)]),
    'vjp/ifft': np.array([(-0.144-0.68625j), (-0.7284837386260387-0.35772287142747455j),
        (0.31+0.4675j), (0.15131930842572128-0.5155035713374683j),
        (-0.001999999999999974+0.39775000000000005j), (0.11898373862603873-0.13427712857252544j),
        (-0.37599999999999995-0.28600000000000003j), (-0.9818193084257213-0.37549642866253174j)]),
    'vjp/fft_ortho': np.array([(-0.4072935059634512-1.9410081143570728j),
        (-2.777004363550856-1.0620642840744274j), (-1.0634885989045673-0.8089301576774105j),
        (0.3365368337335988-0.3797930726875626j), (-0.005656854249492305+1.125006888867797j),
        (0.42799563644914485-1.4580642840744273j), (0.8768124086713188+1.322289680818844j),
        (-2.0604631662664015-1.0117930726875626j)]),
    'vjp/ifft_forward': np.array([(-1.152-5.49j), (-5.827869909008309-2.8617829714197964j),
        (2.48+3.74j), (1.2105544674057702-4.124028570699746j),
        (-0.015999999999999792+3.1820000000000004j), (0.9518699090083098-1.0742170285802035j),
        (-3.0079999999999996-2.2880000000000003j), (-7.85455446740577-3.003971429300254j)]),
    'vjp/fft_pad10': np.array([(2.5289999999999995-0.34499999999999975j),
        (-4.220751782998041+2.869844015849017j), (-1.688073649268751-4.582824467533022j),
        (-2.58002156219521-1.7050315272613483j), (-0.7776762106447301+5.849815519267411j),
        (-0.4910000000000001-4.497000000000001j), (4.302340482793163-4.417875259185134j),
        (2.6462416489687803-4.360933231640506j)]),
    'vjp/ifft_crop6': np.array([(0.22766666666666668-0.8310000000000001j),
        (0.015589538336578057-1.1115985509309114j), (-0.6734011180780854-0.43952618691755985j),
        (-0.2626666666666666+0.5293333333333333j), (-0.256265548588581+0.25502618691755985j),
        (-0.7029228716699114+0.10776521759757818j), 0j, 0j]),
    'vjp/rfft': np.array([-0.903, -6.304674816067193, -2.233, -3.0926824663564076,
        0.6930000000000001, -0.8373251839328071, 0.7470000000000003, -1.2853175336435925]),
    'vjp/irfft': np.array([(0.061499999999999985-0j),
        (-0.28799020510455225+0.27835459941111984j), (0.131-0.379j),
        (0.5159902051045523-0.03864540058888019j), (0.1155-0j)]),
    'vjp/irfft_odd9': np.array([(0.1386666666666667-0j),
        (0.49933302548639336-0.3202902034942307j), (-0.1771028014363159-0.20573543334389296j),
        (-0.7853333333333332-0.2567284196996536j), (-0.00256355738341084-0.37330620731489605j)]),
    'vjp/fft2': np.array([[(5.109000000000001+1.624j),
        (1.4249999999999998-2.4299999999999997j), (-1.3209999999999997+4.3580000000000005j),
        (-0.2809999999999999-1.4159999999999995j)], [(-7.422533135948653-3.167936021275629j),
        (-0.8119968674675144+4.905576026305178j), (-1.8008887163355132-1.759520063960158j),
        (-7.674517942549501+1.438918904799818j)], [(-5.981466864051347+5.287936021275629j),
        (3.3379968674675142-1.6415760263051784j), (-3.6611112836644875+1.517520063960158j),
        (1.7305179425495005-0.9409189047998188j)]]),
    'vjp/ifft2': np.array([[(0.4257500000000001+0.13533333333333333j),
        (-0.02341666666666664-0.11799999999999997j), (-0.11008333333333332+0.3631666666666667j),
        (0.11874999999999997-0.20249999999999996j)], [(-0.4984555720042789+0.4406613351063024j),
        (0.14420982854579176-0.07840990873331824j), (-0.30509260697204066+0.12646000533001317j),
        (0.27816640562229283-0.13679800219209812j)], [(-0.6185444279957211-0.26399466843963576j),
        (-0.6395431618791251+0.1199099087333182j), (-0.1500740596946261-0.14662667199667984j),
        (-0.06766640562229286+0.40879800219209805j)]]),
}
# END JAX


def _close(ours, ref):
    ours = ours if isinstance(ours, tuple) else (ours,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        r = np.asarray(r)
        assert np.asarray(o).dtype == r.dtype, (np.asarray(o).dtype, r.dtype)
        np.testing.assert_allclose(o, r, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(r).max()))


@pytest.mark.parametrize("name", sorted(GRAD))
def test_grad_matches_jax(name):
    g, args = _grad(ad, name)
    _close(g(*args), JAX["grad/" + name])


def test_grad_of_abs2_is_twice_conj_z():
    # the closed form behind JAX's convention, independent of the stored numbers
    np.testing.assert_allclose(_grad(ad, "abs2")[0](Z), 2 * np.conj(Z), rtol=1e-15)


@pytest.mark.parametrize("name", sorted(HOLO))
@pytest.mark.parametrize("jac", ["jacfwd", "jacrev"])
def test_holomorphic_jacobian_matches_jax(name, jac):
    _close(_holo(ad, name, jac)(ZH), JAX["jac/" + name])


def test_holomorphic_grad_matches_jax():
    g = ad.grad(lambda z: holo_sum(anp, z), holomorphic=True)
    _close(g(ZH), JAX["holo_grad"])
    # f'(z) in closed form: d/dz z² sin z = 2z sin z + z² cos z
    np.testing.assert_allclose(g(ZH), 2 * ZH * np.sin(ZH) + ZH ** 2 * np.cos(ZH), rtol=1e-13)


@pytest.mark.parametrize("name", sorted(VJP))
def test_fft_vjp_matches_jax(name):
    f, args = _vjp(ad, name)
    _close(f(*args), JAX["vjp/" + name])


# under jit: the compiled kernels give the same numbers (one jitted function per case,
# compiled once at module level through the cache)
JIT_GRAD = {name: _grad(ad, name) for name in GRAD}
JIT_GRAD = {name: (ad.jit(g), args) for name, (g, args) in JIT_GRAD.items()}
JIT_VJP = {name: (ad.jit(f), args) for name, (f, args) in
           ((n, _vjp(ad, n)) for n in ("fft", "ifft", "rfft", "irfft"))}


@pytest.mark.parametrize("name", sorted(GRAD))
def test_jit_grad_matches_jax(name):
    g, args = JIT_GRAD[name]
    _close(assert_compiled(g, *args), JAX["grad/" + name])


@pytest.mark.parametrize("name", sorted(JIT_VJP))
def test_jit_fft_vjp_matches_jax(name):
    f, args = JIT_VJP[name]
    _close(assert_compiled(f, *args), JAX["vjp/" + name])


def test_jit_holomorphic_jacrev_matches_jax():
    j = ad.jit(_holo(ad, "sin_exp", "jacrev"))
    _close(assert_compiled(j, ZH), JAX["jac/sin_exp"])


def _jax_outputs():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    out = {}
    for name in GRAD:
        g, args = _grad(jax, name)
        out["grad/" + name] = g(*args)
    for name in HOLO:
        fwd, rev = _holo(jax, name, "jacfwd")(ZH), _holo(jax, name, "jacrev")(ZH)
        np.testing.assert_allclose(fwd, rev, rtol=1e-13)
        out["jac/" + name] = fwd
    out["holo_grad"] = jax.grad(lambda z: holo_sum(jax.numpy, z), holomorphic=True)(ZH)
    for name in VJP:
        f, args = _vjp(jax, name)
        out["vjp/" + name] = f(*args)
    return {k: tuple(np.asarray(x) for x in v) if isinstance(v, tuple) else np.asarray(v)
            for k, v in out.items()}


@pytest.mark.slow                       # importing jax and tracing 22 functions: ~10 s
def test_live_jax():
    """JAX, when it imports, still gives the stored numbers (and so ours)."""
    live = _jax_outputs()
    assert sorted(live) == sorted(JAX)
    for k, v in live.items():
        _close(v, JAX[k])


if __name__ == "__main__":
    import textwrap

    def lit(a):
        a = np.asarray(a)
        if not a.ndim:
            return f"np.{a.dtype}({a.item()!r})"
        return f"np.array({a.tolist()!r})"
    print("JAX = {")
    for k, v in _jax_outputs().items():
        body = ("(" + ", ".join(lit(x) for x in v) + ",)") if isinstance(v, tuple) else lit(v)
        lines = textwrap.wrap(f"{k!r}: {body},", 91, break_long_words=False,
                              break_on_hyphens=False)
        print("    " + "\n        ".join(lines))
    print("}")
