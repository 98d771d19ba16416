"""JAX's ``examples/mnist_classifier.py``, ported by changing the imports.

The original trains ``stax.serial(Dense(1024), Relu, Dense(1024), Relu, Dense(10),
LogSoftmax)`` on MNIST with ``optimizers.momentum`` and a jitted update. This port keeps
the code (smaller layers) and swaps MNIST for synthetic 10-class data, so it runs in
seconds offline. The edited lines (JAX's in the comments)::

    import autodiff.numpy as jnp                                # import jax.numpy as jnp
    from autodiff import jit, grad, random                      # from jax import jit, grad, random
    from autodiff.example_libraries import optimizers, stax     # from jax.example_libraries import ...
    from autodiff.example_libraries.stax import Dense, Relu, LogSoftmax

Run: ``python examples/port_jax_mnist_classifier.py``
"""
import itertools
import time

import numpy.random as npr

import autodiff as ad
import autodiff.numpy as jnp
from autodiff import grad, jit, random
from autodiff.example_libraries import optimizers, stax
from autodiff.example_libraries.stax import Dense, LogSoftmax, Relu


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == target_class)


init_random_params, predict = stax.serial(
    Dense(64), Relu,
    Dense(64), Relu,
    Dense(10), LogSoftmax)


def synthetic_mnist(rs, n, centers):
    labels = rs.randint(0, 10, size=n)
    images = centers[labels] + rs.randn(n, centers.shape[1])
    return images, jnp.eye(10)[labels]


if __name__ == "__main__":
    ad.config.update("jit_background_compile", False)
    rng = random.PRNGKey(0)

    step_size = 0.01
    num_epochs = 5
    batch_size = 128
    momentum_mass = 0.9

    data_rs = npr.RandomState(0)
    centers = 0.5 * data_rs.randn(10, 64)
    train_images, train_labels = synthetic_mnist(data_rs, 4096, centers)
    test_images, test_labels = synthetic_mnist(data_rs, 1024, centers)
    num_train = train_images.shape[0]
    num_complete_batches, leftover = divmod(num_train, batch_size)
    num_batches = num_complete_batches + bool(leftover)

    def data_stream():
        rs = npr.RandomState(0)
        while True:
            perm = rs.permutation(num_train)
            for i in range(num_batches):
                batch_idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train_images[batch_idx], train_labels[batch_idx]
    batches = data_stream()

    opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=momentum_mass)

    @jit
    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, grad(loss)(params, batch), opt_state)

    _, init_params = init_random_params(rng, (-1, 64))
    opt_state = opt_init(init_params)
    itercount = itertools.count()

    print("\nStarting training...")
    for epoch in range(num_epochs):
        start_time = time.time()
        for _ in range(num_batches):
            opt_state = update(next(itercount), opt_state, next(batches))
        epoch_time = time.time() - start_time

        params = get_params(opt_state)
        train_acc = accuracy(params, (train_images, train_labels))
        test_acc = accuracy(params, (test_images, test_labels))
        print(f"Epoch {epoch} in {epoch_time:0.2f} sec")
        print(f"Training set accuracy {train_acc}")
        print(f"Test set accuracy {test_acc}")
    assert test_acc > 0.9
