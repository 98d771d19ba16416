"""Neural-network helpers: activations and losses built from ``autodiff.numpy``.

>>> import numpy as np, autodiff as ad
>>> ad.nn.relu(np.array([-1.0, 2.0]))
array([0., 2.])
"""
import numpy as np

from . import numpy as anp
from .numpy import logsumexp, softmax, log_softmax  # noqa: F401
from .numpy._base import npfunc, asarray
from . import primitives as P


@npfunc(None)
def relu(x):
    x = asarray(x)
    # relu'(0) = 0, as in JAX and PyTorch (maximum's tie rule would give 1/2)
    return anp.where(anp.greater(x, 0), x, anp.zeros_like(x))


@npfunc(None)
def sigmoid(x):
    """Logistic function ``1 / (1 + exp(-x))``, stable for large ``|x|``."""
    x = asarray(x)
    x = P.convert(x, np.float64 if P.dtype_of(x).kind != "f" else P.dtype_of(x))
    return P.logistic_p.bind(x)


logistic = sigmoid


@npfunc(None)
def softplus(x):
    """``log(1 + exp(x))`` computed as ``max(x, 0) + log1p(exp(-|x|))``."""
    x = asarray(x)
    return anp.add(anp.maximum(x, 0), anp.log1p(anp.exp(anp.negative(anp.abs(x)))))


@npfunc(None)
def silu(x):
    return anp.multiply(x, sigmoid(x))


swish = silu


@npfunc(None)
def gelu(x, approximate=True):
    x = asarray(x)
    if approximate:
        c = np.sqrt(2.0 / np.pi)
        return anp.multiply(anp.multiply(x, 0.5),
                            anp.add(1.0, anp.tanh(anp.multiply(anp.add(x, anp.multiply(anp.power(x, 3), 0.044715)), c))))
    # exact form x·Φ(x) = x·(1 + erf(x/√2))/2, Φ from autodiff.scipy.special (custom_jvp)
    from .scipy.special import ndtr
    return anp.multiply(x, ndtr(x))


@npfunc(None)
def leaky_relu(x, negative_slope=0.01):
    return anp.where(anp.greater_equal(x, 0), x, anp.multiply(x, negative_slope))


@npfunc(None)
def elu(x, alpha=1.0):
    x = asarray(x)
    safe = anp.minimum(x, 0)
    return anp.where(anp.greater(x, 0), x, anp.multiply(anp.expm1(safe), alpha))


def one_hot(labels, num_classes, dtype=np.float64):
    """``one_hot(labels, k)[..., j] = (labels == j)``."""
    labels = asarray(labels)
    return anp.astype(anp.equal(anp.expand_dims(labels, -1), np.arange(num_classes)), dtype)


def softmax_cross_entropy(logits, labels):
    """Mean cross-entropy of integer ``labels`` under ``softmax(logits)``."""
    lp = log_softmax(logits, axis=-1)
    k = anp.shape(lp)[-1]
    return anp.negative(anp.mean(anp.sum(anp.multiply(lp, one_hot(labels, k, lp.dtype if hasattr(lp, 'dtype') else np.float64)), axis=-1)))
