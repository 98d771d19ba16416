"""The seed's imperative API: Variables on a tape, backward(), no_grad, custom Functions.

    python examples/tape.py

Each operation on a Variable records a jaxpr equation; ``backward()`` differentiates
the recorded program with the library's own reverse mode (and caches the result by
the program's structure, so a training loop builds it once).
"""
import numpy as np

import autodiff as ad
import autodiff.numpy as anp

# --- the seed's scenario -------------------------------------------------------------
x = ad.Variable(np.array([2.0, 3.0]))          # a leaf; float arrays require grad
w = ad.Variable(np.array([1.0, 2.0]))
z = (x * w).sum()
z.backward()
print("z =", float(z), " x.grad =", x.grad, " w.grad =", w.grad)
assert np.allclose(x.grad, [1.0, 2.0]) and np.allclose(w.grad, [2.0, 3.0])

# what the tape recorded, as the library's IR
y = anp.tanh(x * w).sum()
print("recorded for y = tanh(x * w).sum():")
print(ad.tape.recorded_jaxpr(y))

# --- gradients accumulate until zero_grad ----------------------------------------------
x.zero_grad(); w.zero_grad()
for _ in range(2):
    (x * w).sum().backward()
print("after two backward calls: x.grad =", x.grad)          # 2·w
assert np.allclose(x.grad, 2 * w.numpy())
x.zero_grad()
print("after zero_grad:          x.grad =", x.grad)

# --- no_grad / enable_grad / detach ----------------------------------------------------
tape = ad.tape.current_tape()
n = tape.size
with ad.no_grad():
    frozen = x * w                               # computed, nothing recorded
    with ad.enable_grad():
        tracked = x * w                          # recorded again
print("recorded under no_grad:", tape.size - n, "equation(s) (the one inside enable_grad)")
print("frozen.requires_grad =", frozen.requires_grad, " tracked.requires_grad =",
      tracked.requires_grad)

x.grad = w.grad = None
(x * w.detach()).sum().backward()               # detach cuts the path to w
print("through detach: x.grad =", x.grad, " w.grad =", w.grad)
assert w.grad is None


@ad.no_grad()
def evaluate(v):
    return (v * v).sum()


print("decorated with no_grad: requires_grad =", evaluate(x).requires_grad)

# --- retain_graph ------------------------------------------------------------------------
x.zero_grad()
loss = (x ** 2).sum()
loss.backward(retain_graph=True)
loss.backward()                                  # allowed: the first call kept the graph
print("2 × d(x²)/dx =", x.grad)
try:
    loss.backward()                              # the graph was consumed by the last call
except ad.errors.TapeError as e:
    print("third backward:", str(e).splitlines()[0][:72], "...")


# --- a custom Function: the straight-through estimator -------------------------------
class RoundSTE(ad.Function):
    """round() forward, identity backward (quantization-aware training)."""

    @staticmethod
    def forward(ctx, v):
        return anp.round(v)

    @staticmethod
    def backward(ctx, g):
        return g


class Clamp(ad.Function):
    """clip with the gradient masked where clipped, using save_for_backward."""

    @staticmethod
    def forward(ctx, v, lo, hi):                 # lo, hi: static Python numbers
        ctx.save_for_backward(v)
        ctx.lo, ctx.hi = lo, hi
        return anp.clip(v, lo, hi)

    @staticmethod
    def backward(ctx, g):
        (v,) = ctx.saved_tensors
        inside = (v >= ctx.lo) & (v <= ctx.hi)
        return anp.where(inside, g, 0.0), None, None


q = ad.Variable(np.array([0.3, 1.7, -2.4]))
(RoundSTE.apply(q) * np.array([1.0, 2.0, 3.0])).sum().backward()
print("STE on the tape:       grad =", q.grad)
g = ad.grad(lambda v: anp.sum(RoundSTE.apply(v) * np.array([1.0, 2.0, 3.0])))(q.numpy())
print("STE in ad.grad:        grad =", g)
assert np.allclose(q.grad, g)
q.zero_grad()
Clamp.apply(q, -1.0, 1.0).sum().backward()
print("Clamp(-1, 1) gradient:      ", q.grad)

# --- functional transforms accept Variables, and are recorded ---------------------------
v = ad.Variable(np.array(0.5))
dtanh = ad.grad(anp.tanh)(v)                     # a Variable: 1 - tanh²
dtanh.backward()                                 # so its derivative is the second one
print("d²tanh/dx² at 0.5 via tape-over-grad:", float(v.grad),
      " closed form:", -2 * np.tanh(0.5) * (1 - np.tanh(0.5) ** 2))

# --- the graph cache -----------------------------------------------------------------
ad.tape.clear_cache()
W = ad.Variable(np.random.default_rng(0).standard_normal((3, 2)))
for step in range(5):
    batch = np.random.default_rng(step).standard_normal((8, 3))
    loss = anp.mean(anp.tanh(batch @ W) ** 2)
    loss.backward()
    with ad.no_grad():
        W -= 0.1 * W.grad                        # in place on the leaf
    W.zero_grad()
print("graph cache after 5 steps of one model:", ad.tape.cache_info())
print("tape now holds", tape.size, "equations")
