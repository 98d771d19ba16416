"""Every plotting example runs at a small size, passes its own checks and writes its figure
(matplotlib's Agg backend: no window); by default figures go to the ignored examples/out/."""
import inspect
import pathlib
import re
import runpy
import subprocess

import numpy as np
import pytest

pytest.importorskip("matplotlib")
EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
PNG = b"\x89PNG\r\n\x1a\n"

SMALL = {
    "tanh_derivatives": dict(order=4, points=50),
    "checkpoint_memory": dict(depths=(4, 16), width=16),
    "gp_regression": dict(points=25),
    "ode_rk4": dict(n=100, use_jit=False),
    # the jitted steps of these are compiled in test_optim / test_jit already; here they
    # run on the interpreter (use_jit=False) to keep the suite short
    "train_mlp": dict(samples=64, hidden=8, steps=40, use_jit=False),
    "digits_mlp": dict(steps=30, use_jit=False),
    "maml_sines": dict(iterations=5, meta_batch=4, use_jit=False),
    "dp_sgd": dict(steps=30, n=300, sigmas=(0.0, 2.0), use_jit=False),
    "hamiltonian_md": dict(n_side=3, steps=200, use_jit=False),
}


def _run(name, figure):
    mod = runpy.run_path(str(EXAMPLES / f"{name}.py"))
    return mod["main"](figure=str(figure), **SMALL[name])


@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_runs_and_writes_its_figure(name, tmp_path, capsys):
    figure = tmp_path / "not_yet" / f"{name}.png"           # the folder is made on demand
    result = _run(name, figure)
    assert figure.read_bytes()[:8] == PNG and figure.stat().st_size > 5000
    assert str(figure) in capsys.readouterr().out
    if name == "tanh_derivatives":
        # order 1 is 1 - tanh², order 2 is -2 tanh (1 - tanh²)
        x = np.linspace(-4.0, 4.0, 50)
        t = np.tanh(x)
        np.testing.assert_allclose(result[1], 1 - t ** 2, rtol=1e-12)
        np.testing.assert_allclose(result[2], -2 * t * (1 - t ** 2), rtol=1e-12, atol=1e-15)
    elif name == "checkpoint_memory":
        assert result["sqrt_n"][-1] < result["none"][-1] / 2
    elif name == "train_mlp":
        for losses in result.values():
            assert losses[-1] < 0.5 * losses[0]
        np.testing.assert_allclose(result["functional"], result["imperative"], rtol=1e-8)
    elif name == "digits_mlp":
        assert result > 0.85                      # test accuracy after 30 full-batch steps
    elif name == "maml_sines":
        losses, before, after = result
        assert len(losses) == 5 and np.all(np.isfinite(losses)) and before > 0 and after > 0
    elif name == "dp_sgd":
        curves, acc = result
        assert acc[0.0] > 0.8 and acc[2.0] > 0.7
    elif name == "hamiltonian_md":
        assert result < 1e-3                      # relative energy deviation
    elif name == "ode_rk4":
        assert abs(result - 0.4) < 1e-8           # the recovered damping
    elif name == "gp_regression":
        assert 0.03 < np.exp(result[2]) < 0.3     # the noise level, true value 0.1


@pytest.mark.slow
def test_hamiltonian_md_compiled(tmp_path):
    # the example's point is one jitted scan; its Numba compile takes 15-25 s on 2 busy
    # cores (the backend's compile time for this program, not the example's), so it runs here
    mod = runpy.run_path(str(EXAMPLES / "hamiltonian_md.py"))
    drift = mod["main"](n_side=3, steps=200, figure=str(tmp_path / "md.png"))
    assert drift < 1e-3 and (tmp_path / "md.png").read_bytes()[:8] == PNG


def _scripts():
    return sorted(p for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def test_examples_write_only_under_examples_out():
    # every default output path is examples/out/<name>, and nothing else writes files: no
    # savefig / open(..., "w") / np.save whose path was not passed in
    out = EXAMPLES / "out"
    for path in _scripts():
        src = path.read_text()
        for m in re.finditer(r"\w+=[\"'][^\"']*\.(?:png|svg|pdf|csv|npz)[\"']", src):
            raise AssertionError(f"{path.name}: a default output path outside examples/out: "
                                 f"{m.group(0)}")
        for m in re.finditer(r"open\([^)]*[\"'][wa]b?[\"']|np\.save|savetxt|to_csv", src):
            raise AssertionError(f"{path.name}: writes a file directly: {m.group(0)}")
        if "savefig" not in src:
            continue
        mod = runpy.run_path(str(path))
        assert mod["OUT"] == out, path.name
        default = inspect.signature(mod["main"]).parameters["figure"].default
        assert default is None or pathlib.Path(default).parent == out, (path.name, default)
        if '"--figure"' in src:
            assert f'default=str(OUT / "{path.stem}.png")' in src, path.name
        assert "parent.mkdir(parents=True, exist_ok=True)" in src, path.name


def test_examples_out_is_ignored_by_git():
    root = EXAMPLES.parent
    probe = subprocess.run(["git", "check-ignore", "-q", "examples/out/any.png"], cwd=root)
    assert probe.returncode == 0, "examples/out/ is not in .gitignore"


@pytest.mark.parametrize("background", [True, False])
def test_ode_rk4_times_the_phases_it_names(background, request, capsys):
    # users' default (background compile): the jitted gradient's first calls run on the
    # interpreter tier (nothing is compiled yet), the wait is the background compile, the
    # last calls run the kernel. Blocking (the suite's default, conftest.py): the first call
    # compiles. The example reads each call's tier from cache_info() and checks the
    # gradients of every tier against reverse mode, itself checked by central differences.
    import autodiff as ad
    if background:
        request.getfixturevalue("background_compile")
    mod = runpy.run_path(str(EXAMPLES / "ode_rk4.py"))
    params, y0 = np.array([4.0, 0.4]), np.array([1.0, 0.0])

    def final_x(p, y):
        return mod["integrate"](p, y, 0.05, 20)[0][0]
    g_p, g_y = ad.grad(final_x, argnums=(0, 1))(params, y0)
    eps = 1e-6
    fd = [(final_x(params + e, y0) - final_x(params - e, y0)) / (2 * eps)
          for e in np.eye(2) * eps]
    np.testing.assert_allclose(g_p, fd, rtol=1e-6)
    phases = mod["jit_phases"](final_x, params, y0, g_p, g_y)
    out = capsys.readouterr().out
    calls = [k for k in phases if k.startswith("call")]
    lines = {k: next(ln for ln in out.splitlines() if ln.strip().startswith(k + ":"))
             for k in calls}
    assert "compiled call: " in out
    if background:
        assert "trace + compile" not in lines["call 1"]      # what the old text claimed
        after = ad.config.jit_compile_after
        assert calls == [f"call {i + 1}" for i in range(after)]
        assert "(trace + ran on the numpy interpreter: no kernel yet" in lines["call 1"]
        assert all("interpreter" in ln and "compiled," not in ln for ln in lines.values())
        assert "background compile started" in lines[f"call {after}"]
        assert "ad.wait_for_compiles()" in out
    else:
        assert calls == ["call 1"] and "ad.wait_for_compiles()" not in out
        assert "(trace + compiled, or loaded from the disk cache, before running" in \
            lines["call 1"]
