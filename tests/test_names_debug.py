"""jax.debug's remaining names (issue 36): log, breakpoint (run with a patched pdb),
the sharding inspectors on one device, the effect classes."""
import logging
import pdb

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp


def test_log_eager_and_jit(caplog):
    f = ad.jit(lambda x: (ad.debug.log("x = {x}, s = {}", anp.sum(x), x=x), x * 2)[1])
    with caplog.at_level(logging.INFO, logger="autodiff.debug"):
        ad.debug.log("eager {}", 3)
        out = f(np.arange(3.0))
        f(np.ones(3))
    assert np.array_equal(out, [0.0, 2.0, 4.0])
    msgs = [r.getMessage() for r in caplog.records if r.name == "autodiff.debug"]
    # JAX 0.10.2: jax.debug.log("v = {}", 3) logs "v = 3" at INFO
    assert msgs == ["eager 3", "x = [0. 1. 2.], s = 3.0", "x = [1. 1. 1.], s = 3.0"]
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == "autodiff.debug")


@pytest.fixture
def fake_pdb(monkeypatch):
    seen = []
    monkeypatch.setattr(pdb.Pdb, "set_trace",
                        lambda self, frame=None: seen.append(dict(frame.f_locals)))
    return seen


def _f(x):
    y = anp.sin(x)
    ad.debug.breakpoint()
    return anp.sum(y * x)


def test_breakpoint_eager_grad_and_jit(fake_pdb):
    x = np.array([0.5, 1.0])
    _f(x)
    assert set(fake_pdb[0]) == {"x", "y"} and np.allclose(fake_pdb[0]["y"], np.sin(x))
    g = ad.grad(_f)(x)                       # the values of the primal computation
    assert np.allclose(fake_pdb[1]["y"], np.sin(x))
    assert np.allclose(g, np.sin(x) + x * np.cos(x))
    fj = ad.jit(_f)
    fj(x)
    fj(2 * x)                                # run-time values, not the first trace's
    assert np.allclose(fake_pdb[-1]["y"], np.sin(2 * x)) and np.allclose(fake_pdb[-1]["x"], 2 * x)
    assert all(isinstance(v, np.ndarray) for v in fake_pdb[-1].values())


def test_inspect_and_visualize_one_device(capsys):
    seen = []
    ad.debug.inspect_array_sharding((np.ones(2), np.ones((2, 3))), callback=seen.append)
    # JAX 0.10.2 on one CPU: SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
    assert [repr(s) for s in seen] == ["SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"] * 2
    s = seen[0]
    assert s.device_set == {ad.devices()[0]} and s.is_fully_replicated and s.num_devices == 1
    assert s.shard_shape((2, 3)) == (2, 3)
    inside = []
    ad.jit(lambda x: (ad.debug.inspect_array_sharding(x, callback=inside.append), x + 1)[1])(np.ones(2))
    assert inside and inside[0] == s
    ad.debug.visualize_array_sharding(np.ones((4, 8)))
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 5 and "CPU 0" in out[2] and out[0].startswith("┌") and out[-1].startswith("└")
    assert len({len(line) for line in out}) == 1
    with pytest.raises(ValueError, match="1-D and 2-D"):
        ad.debug.visualize_array_sharding(np.ones((2, 2, 2)))


def test_effect_classes():
    assert issubclass(ad.debug.OrderedDebugEffect, ad.debug.DebugEffect)
    assert repr(ad.debug.debug_effect) == "Debug"
