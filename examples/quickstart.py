"""A first tour of autodiff: trace, differentiate, vectorize, compile."""
import numpy as np

import autodiff as ad
import autodiff.numpy as anp


def loss(w, x, y):
    """Least squares with a tanh feature map."""
    pred = anp.tanh(x @ w)
    return anp.mean((pred - y) ** 2)


rng = np.random.default_rng(0)
x = rng.standard_normal((32, 3))
w_true = np.array([0.5, -1.0, 2.0])
y = np.tanh(x @ w_true)
w = np.zeros(3)

print("the traced program of the loss:")
print(ad.make_jaxpr(loss)(w, x, y))

grad_loss = ad.grad(loss)
for step in range(200):
    w = w - 0.5 * grad_loss(w, x, y)
print("loss after 200 steps of gradient descent:", float(loss(w, x, y)))
print("recovered weights:", np.round(w, 3))

# higher derivatives compose: the Hessian of the loss, and the 4th derivative of tanh
print("Hessian diagonal:", np.round(np.diag(ad.hessian(loss)(w, x, y)), 4))
d4 = ad.grad(ad.grad(ad.grad(ad.grad(anp.tanh))))
print("d^4/dx^4 tanh(0.5) =", float(d4(0.5)))

# per-example gradients with vmap
per_example = ad.vmap(ad.grad(loss), in_axes=(None, 0, 0))(w, x[:, None, :], y[:, None])
print("per-example gradient shape:", per_example.shape)

# compile the gradient step with Numba: one fused kernel, cached in memory and on disk.
# The first call does not wait: it runs on the interpreter while Numba compiles in the
# background, and later calls use the kernel once it is ready.
fast_grad = ad.jit(grad_loss)
assert np.allclose(fast_grad(w, x, y), grad_loss(w, x, y), rtol=1e-10, atol=1e-14)
print("jit first call:", fast_grad.cache_info())
fast_grad.wait_compiled()
assert np.allclose(fast_grad(w, x, y), grad_loss(w, x, y), rtol=1e-10, atol=1e-14)
print("jit gradient matches once compiled:", fast_grad.cache_info())
