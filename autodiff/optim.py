"""Optimizers, in two forms over one set of update rules.

Functional (optax's convention, jittable; params, grads and state are pytrees)::

    opt = ad.optim.adam(1e-3)
    state = opt.init(params)
    updates, state = opt.update(grads, state, params)
    params = ad.optim.apply_updates(params, updates)

Imperative (PyTorch's convention, on :class:`~autodiff.Variable` leaves)::

    opt = ad.optim.Adam([w, b], lr=1e-3)
    opt.zero_grad(); loss.backward(); opt.step()

The classes also work functionally when built without parameters:
``ad.optim.SGD(lr=0.1, momentum=0.9).init(params)``.

Update rules (PyTorch's, ``g`` the gradient, ``t`` the step count from 1):

* SGD: ``g += wd·p``; with momentum ``μ``: ``b = μ·b + g`` (``b₁ = g``), then
  ``g = g + μ·b`` (Nesterov) or ``g = b``; ``p -= lr·g``.
* Adam: ``g += wd·p`` (L2); ``m = β₁m + (1-β₁)g``; ``v = β₂v + (1-β₂)g²``;
  ``p -= lr·(m/(1-β₁ᵗ)) / (√(v/(1-β₂ᵗ)) + ε)``.
* AdamW: ``p -= lr·wd·p`` (decoupled), then Adam without the L2 term.

More optimizers, in optax's form (each a :func:`chain` of small transformations, with
optax's equations): ``rmsprop``, ``adagrad``, ``adadelta``, ``lion``, ``adamax``,
``nadam``; as PyTorch classes (PyTorch's equations and defaults): ``RMSprop``,
``Adagrad``, ``Adadelta``. Learning-rate schedules (``count -> lr``, jittable):
``constant_schedule``, ``linear_schedule`` (linear warmup), ``exponential_decay``,
``cosine_decay_schedule``, ``warmup_cosine_decay_schedule``,
``piecewise_constant_schedule``, ``join_schedules``. Building blocks: ``chain``,
``scale``, ``scale_by_schedule``, ``scale_by_learning_rate``, ``clip`` (by value),
``clip_by_global_norm``, ``add_decayed_weights`` (with a mask), ``trace`` (momentum),
``scale_by_rms`` / ``scale_by_rss`` / ``scale_by_adadelta`` / ``scale_by_lion`` / ... .

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> loss = lambda p: anp.sum((p["w"] - 3.0) ** 2)
>>> params = {"w": np.zeros(2)}
>>> opt = ad.optim.sgd(0.1, momentum=0.5)
>>> state = opt.init(params)
>>> for _ in range(100):
...     updates, state = opt.update(ad.grad(loss)(params), state, params)
...     params = ad.optim.apply_updates(params, updates)
>>> np.round(params["w"], 6)
array([3., 3.])
"""
from typing import Any, NamedTuple

import numpy as np

from . import numpy as anp
# the schedules and the composable transformations live in their own modules; this module
# names them all (and builds its optimizers on the transformations' foundations)
from .optim_schedules import *  # noqa: F401,F403
from .optim_schedules import count_as_float
from .optim_transforms import *  # noqa: F401,F403
from .optim_transforms import (AdamState, GradientTransformation, cast_like, check_hparams,
                               require_params, zeros_like_tree)
from .tape import Variable, enable_grad
from .tree_util import tree_flatten, tree_map

__all__ = ["GradientTransformation", "SGDState", "AdamState", "sgd", "adam", "adamw",
           "apply_updates", "Optimizer", "SGD", "Adam", "AdamW",
           # optax's schedules and composable transformations
           "constant_schedule", "linear_schedule", "exponential_decay", "cosine_decay_schedule",
           "join_schedules", "warmup_cosine_decay_schedule", "piecewise_constant_schedule",
           "EmptyState", "ScaleByScheduleState", "ScaleByRmsState", "ScaleByRStdDevState",
           "ScaleByRssState", "ScaleByAdaDeltaState", "ScaleByLionState", "ScaleByAdamaxState",
           "TraceState", "identity", "scale", "scale_by_schedule", "scale_by_learning_rate",
           "clip", "clip_by_value", "global_norm", "clip_by_global_norm", "add_decayed_weights",
           "chain", "trace", "scale_by_rms", "scale_by_stddev", "scale_by_rss",
           "scale_by_adadelta", "scale_by_lion", "scale_by_adamax", "scale_by_nadam",
           "rmsprop", "adagrad", "adadelta", "lion", "adamax", "nadam",
           # PyTorch's classes
           "RMSprop", "Adagrad", "Adadelta"]


class SGDState(NamedTuple):
    count: Any         # int32 scalar: steps taken
    momentum: Any      # momentum buffers (a pytree like params), or None without momentum


def _lr(learning_rate, count):
    return learning_rate(count) if callable(learning_rate) else learning_rate


def sgd(learning_rate, momentum=0.0, nesterov=False, weight_decay=0.0):
    """Stochastic gradient descent with optional (Nesterov) momentum and L2 weight decay.

    ``learning_rate`` may be a schedule ``count -> lr``.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.sgd(0.1)
    >>> updates, _ = opt.update({"w": np.array([1.0, -2.0])}, opt.init({"w": np.zeros(2)}))
    >>> updates["w"]
    array([-0.1,  0.2])
    """
    check_hparams(learning_rate, momentum, weight_decay)
    if nesterov and momentum <= 0:
        raise ValueError("nesterov momentum needs momentum > 0")

    def init(params):
        return SGDState(np.zeros((), np.int32), zeros_like_tree(params) if momentum else None)

    def update(grads, state, params=None):
        if weight_decay:
            require_params(params, "sgd")
            grads = tree_map(lambda g, p: g + weight_decay * p, grads, params)
        lr = _lr(learning_rate, state.count)
        buf = state.momentum
        if momentum:
            if buf is None:
                buf = zeros_like_tree(grads)
            buf = tree_map(lambda b, g: momentum * b + g, buf, grads)
            if nesterov:
                step = tree_map(lambda g, b: g + momentum * b, grads, buf)
            else:
                step = buf
        else:
            step = grads
        updates = tree_map(lambda s: -cast_like(lr, s) * s, step)
        return updates, SGDState(state.count + 1, buf)

    return GradientTransformation(init, update)


def _adam(learning_rate, b1, b2, eps, weight_decay, decoupled, who):
    check_hparams(learning_rate, weight_decay=weight_decay, eps=eps, betas=(b1, b2))

    def init(params):
        return AdamState(np.zeros((), np.int32), zeros_like_tree(params), zeros_like_tree(params))

    def update(grads, state, params=None):
        if weight_decay:
            require_params(params, who)
        if weight_decay and not decoupled:
            grads = tree_map(lambda g, p: g + weight_decay * p, grads, params)
        count = state.count + 1
        lr = _lr(learning_rate, state.count)
        mu = tree_map(lambda m, g: b1 * m + (1.0 - b1) * g, state.mu, grads)
        nu = tree_map(lambda v, g: b2 * v + (1.0 - b2) * (g * g), state.nu, grads)
        t = anp.astype(count, np.float64)
        bc1 = 1.0 - anp.power(b1, t)
        bc2 = 1.0 - anp.power(b2, t)

        def one(m, v, p):
            step = (cast_like(lr, m) * (m / cast_like(bc1, m))
                    / (anp.sqrt(v / cast_like(bc2, v)) + eps))
            if weight_decay and decoupled:
                step = step + cast_like(lr, m) * weight_decay * p
            return -step

        if weight_decay and decoupled:
            updates = tree_map(one, mu, nu, params)
        else:
            updates = tree_map(lambda m, v: one(m, v, None), mu, nu)
        return updates, AdamState(count, mu, nu)

    return GradientTransformation(init, update)


def adam(learning_rate=1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0):
    """Adam (Kingma & Ba), with PyTorch's L2 ``weight_decay`` added to the gradient.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.adam(0.1)
    >>> updates, state = opt.update(np.array([2.0, -0.5]), opt.init(np.zeros(2)))
    >>> np.round(updates, 6)                     # the first step is -lr·sign(g)
    array([-0.1,  0.1])
    """
    return _adam(learning_rate, b1, b2, eps, weight_decay, False, "adam")


def adamw(learning_rate=1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-2):
    """AdamW (Loshchilov & Hutter): Adam with decoupled weight decay ``p -= lr·wd·p``.

    >>> import numpy as np, autodiff as ad
    >>> opt = ad.optim.adamw(0.1, weight_decay=0.5)
    >>> p = np.array([1.0])
    >>> updates, _ = opt.update(np.array([0.0]), opt.init(p), p)   # no gradient: pure decay
    >>> updates
    array([-0.05])
    """
    return _adam(learning_rate, b1, b2, eps, weight_decay, True, "adamw")


def apply_updates(params, updates):
    """``params + updates`` leafwise, keeping each parameter's dtype.

    >>> import numpy as np, autodiff as ad
    >>> ad.optim.apply_updates({"w": np.ones(2, np.float32)}, {"w": np.full(2, 0.5)})
    {'w': array([1.5, 1.5], dtype=float32)}
    """
    def one(p, u):
        if u is None:
            return p
        return anp.astype(p + u, p.dtype) if hasattr(p, "dtype") else p + u
    return tree_map(one, params, updates)




# ----------------------------------------------------------------------------
# Imperative optimizers over Variables
# ----------------------------------------------------------------------------

class Optimizer:
    """Base of the imperative optimizers: parameter groups, ``zero_grad``, ``step``.

    ``params``: Variables (a list, a dict of them, or a pytree), or a list of
    parameter groups ``{"params": [...], "lr": ..., ...}`` whose entries override
    the defaults. Hyperparameters in ``opt.param_groups`` may be changed between
    steps (a learning-rate schedule). Without ``params`` the object is a functional
    optimizer: ``init`` / ``update`` as in :class:`GradientTransformation`.
    """

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        check_hparams(defaults["lr"], defaults.get("momentum", 0.0),
                       defaults.get("weight_decay", 0.0), defaults.get("eps", 0.0),
                       defaults.get("betas", (0.0, 0.0)))
        self.param_groups = []
        self.state = {}             # id(Variable) -> functional optimizer state
        if params is None:
            return
        groups = _param_groups(params)
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group):
        """Add a parameter group: a dict with ``"params"`` (Variables) and per-group hyperparameters
        overriding the defaults."""
        group = dict(group)
        ps = group["params"]
        ps = [ps] if isinstance(ps, Variable) else list(ps)
        for p in ps:
            if not isinstance(p, Variable):
                raise TypeError(f"{type(self).__name__} optimizes Variables, got "
                                f"{type(p).__name__}; for arrays use the functional form "
                                f"(init/update)")
            if not p.is_leaf or not p.requires_grad:
                raise ValueError(f"{type(self).__name__} can only optimize leaf Variables "
                                 f"that require grad")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in ps):
            raise ValueError("a parameter appears in more than one parameter group")
        group["params"] = ps
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Clear every parameter's ``.grad`` (to ``None``, or zeros)."""
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None
                else:
                    p.zero_grad()

    def step(self, closure=None):
        """One update of every parameter with a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            tx = self._transform(group)
            for p in group["params"]:
                if p.grad is None:
                    continue
                value = p.numpy()
                st = self.state.get(id(p))
                if st is None or st[0] is not p:
                    st = (p, tx.init(value))
                updates, new_state = tx.update(np.asarray(p.grad, value.dtype), st[1], value)
                self.state[id(p)] = (p, new_state)
                p._set_value(np.asarray(value + updates, value.dtype))
        return loss

    # functional use of the same object
    def init(self, params):
        """The functional form: the optimizer state for the pytree ``params``, with this optimizer's
        default hyperparameters."""
        return self._transform(self.defaults).init(params)

    def update(self, grads, state, params=None):
        """The functional form: ``(updates, new_state)`` for ``grads``; add the updates with
        ``ad.optim.apply_updates``."""
        return self._transform(self.defaults).update(grads, state, params)

    def _transform(self, hp):
        raise NotImplementedError

    def __repr__(self):
        hp = ", ".join(f"{k}={v}" for k, v in self.defaults.items())
        n = sum(len(g["params"]) for g in self.param_groups)
        return f"{type(self).__name__}({n} parameters, {hp})"


def _param_groups(params):
    if isinstance(params, Variable):
        return [{"params": [params]}]
    if isinstance(params, dict) and "params" not in params:
        params = list(params.values())
    if isinstance(params, dict):
        return [params]
    params = list(params)
    if params and all(isinstance(g, dict) for g in params):
        return params
    leaves, _ = tree_flatten(params)
    return [{"params": leaves}]


def _lr_from(params, lr):
    """``SGD(0.1)`` (functional, lr first) and ``SGD(params, lr=0.1)`` both work."""
    if isinstance(params, (int, float)) and not isinstance(params, bool):
        return None, float(params)
    return params, lr


class SGD(Optimizer):
    """SGD with momentum, Nesterov momentum and weight decay, on Variables.

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([1.0, 2.0]))
    >>> opt = ad.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w                                          # w - 0.1·2w
    Variable([0.8, 1.6], requires_grad=True)
    """

    def __init__(self, params=None, lr=1e-3, momentum=0.0, nesterov=False, weight_decay=0.0):
        params, lr = _lr_from(params, lr)
        if nesterov and momentum <= 0:
            raise ValueError("nesterov momentum needs momentum > 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, nesterov=nesterov,
                                      weight_decay=weight_decay))

    def _transform(self, hp):
        return sgd(hp["lr"], hp["momentum"], hp["nesterov"], hp["weight_decay"])


class Adam(Optimizer):
    """Adam on Variables (``weight_decay`` is L2, added to the gradient, as in PyTorch).

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([1.0, -2.0]))
    >>> opt = ad.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()                                  # first step: -lr·sign(grad)
    >>> np.round(w.numpy(), 6)
    array([ 0.9, -1.9])
    """

    def __init__(self, params=None, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        params, lr = _lr_from(params, lr)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def _transform(self, hp):
        b1, b2 = hp["betas"]
        return adam(hp["lr"], b1, b2, hp["eps"], hp["weight_decay"])


class AdamW(Optimizer):
    """AdamW on Variables: decoupled weight decay (default 0.01, as in PyTorch).

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([2.0]))
    >>> opt = ad.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = np.zeros(1)                        # no gradient: only the decay acts
    >>> opt.step()
    >>> w.numpy()                                   # 2 - 0.1·0.5·2
    array([1.9])
    """

    def __init__(self, params=None, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        params, lr = _lr_from(params, lr)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def _transform(self, hp):
        b1, b2 = hp["betas"]
        return adamw(hp["lr"], b1, b2, hp["eps"], hp["weight_decay"])


class RMSprop(Optimizer):
    """RMSprop on Variables, PyTorch's equations: ``g += wd·p``; ``v = α·v + (1-α)·g²``
    (centered: ``v - ḡ²``); ``u = g/(sqrt(v) + eps)``; with momentum ``b = μ·b + u``;
    ``p -= lr·b`` (or ``lr·u``).

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([1.0]))
    >>> opt = ad.optim.RMSprop([w], lr=0.01, alpha=0.75, eps=0.0)
    >>> w.grad = np.array([2.0]); opt.step()
    >>> np.round(w.numpy(), 6)                      # 1 - 0.01·2/sqrt(0.25·4)
    array([0.98])
    """

    def __init__(self, params=None, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0,
                 momentum=0.0, centered=False):
        params, lr = _lr_from(params, lr)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"invalid alpha {alpha}: it must be in [0, 1]")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered))

    def _transform(self, hp):
        parts = [add_decayed_weights(hp["weight_decay"])] if hp["weight_decay"] else []
        scaler = scale_by_stddev if hp["centered"] else scale_by_rms
        parts.append(scaler(hp["alpha"], hp["eps"], 0.0, eps_in_sqrt=False))
        if hp["momentum"]:
            parts.append(trace(hp["momentum"]))
        return chain(*parts, scale_by_learning_rate(hp["lr"]))


class Adagrad(Optimizer):
    """Adagrad on Variables, PyTorch's equations: ``g += wd·p``;
    ``lrₜ = lr/(1 + (t-1)·lr_decay)``; ``s += g²``; ``p -= lrₜ·g/(sqrt(s) + eps)``.

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([1.0]))
    >>> opt = ad.optim.Adagrad([w], lr=0.5, eps=0.0)
    >>> w.grad = np.array([3.0]); opt.step()
    >>> w.numpy()                                   # 1 - 0.5·3/3
    array([0.5])
    """

    def __init__(self, params=None, lr=1e-2, lr_decay=0.0, weight_decay=0.0,
                 initial_accumulator_value=0.0, eps=1e-10):
        params, lr = _lr_from(params, lr)
        if lr_decay < 0 or initial_accumulator_value < 0:
            raise ValueError("invalid lr_decay / initial_accumulator_value: they must be >= 0")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps))

    def _transform(self, hp):
        lr, decay = hp["lr"], hp["lr_decay"]
        parts = [add_decayed_weights(hp["weight_decay"])] if hp["weight_decay"] else []
        rate = ((lambda count: lr / (1.0 + count_as_float(count) * decay))
                if decay and not callable(lr) else lr)
        return chain(*parts, scale_by_rss(hp["initial_accumulator_value"], hp["eps"],
                                          eps_in_sqrt=False),
                     scale_by_learning_rate(rate))


class Adadelta(Optimizer):
    """Adadelta on Variables (PyTorch's defaults, ``lr=1.0``; the equations of
    :func:`adadelta`).

    >>> import numpy as np, autodiff as ad
    >>> w = ad.Variable(np.array([1.0]))
    >>> opt = ad.optim.Adadelta([w], rho=0.5, eps=1e-2)
    >>> w.grad = np.array([1.0]); opt.step()
    >>> np.round(w.numpy(), 6)                      # 1 - sqrt(0.01/0.51)
    array([0.859972])
    """

    def __init__(self, params=None, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0):
        params, lr = _lr_from(params, lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"invalid rho {rho}: it must be in [0, 1]")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay))

    def _transform(self, hp):
        return adadelta(hp["lr"], hp["rho"], hp["eps"], hp["weight_decay"])
