"""autograd's ``examples/neural_net.py``, ported by changing the imports.

The original trains a tanh MLP on MNIST with ``autograd.misc.optimizers.adam`` and a
``callback(params, iter, gradient)`` that prints progress; this port keeps the code and
swaps MNIST for a synthetic 3-class problem so that it runs in a few seconds offline.
The only edits are these import lines (autograd's in the comments)::

    import autodiff.numpy as np                        # import autograd.numpy as np
    import autodiff.numpy.random as npr                # import autograd.numpy.random as npr
    from autodiff import grad                          # from autograd import grad
    from autodiff.scipy.special import logsumexp       # from autograd.scipy.special import logsumexp
    from autodiff.misc.optimizers import adam          # from autograd.misc.optimizers import adam
    from autodiff.misc import flatten                  # from autograd.misc import flatten

Run: ``python examples/port_autograd_neural_net.py``
"""
import autodiff.numpy as np
import autodiff.numpy.random as npr
from autodiff import grad
from autodiff.misc import flatten
from autodiff.misc.optimizers import adam
from autodiff.scipy.special import logsumexp


def init_random_params(scale, layer_sizes, rs=npr.RandomState(0)):
    """Build a list of (weights, biases) tuples, one for each layer in the net."""
    return [(scale * rs.randn(m, n), scale * rs.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def neural_net_predict(params, inputs):
    """Implements a deep neural network for classification; returns log-probabilities."""
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def l2_norm(params):
    """Computes l2 norm of params by flattening them into a vector."""
    flattened, _ = flatten(params)
    return np.dot(flattened, flattened)


def log_posterior(params, inputs, targets, L2_reg):
    log_prior = -L2_reg * l2_norm(params)
    log_lik = np.sum(neural_net_predict(params, inputs) * targets)
    return log_prior + log_lik


def accuracy(params, inputs, targets):
    target_class = np.argmax(targets, axis=1)
    predicted_class = np.argmax(neural_net_predict(params, inputs), axis=1)
    return np.mean(predicted_class == target_class)


def synthetic_data(n, rs, centers):
    """Three Gaussian classes in 10 dimensions, one-hot labels (stands in for MNIST)."""
    labels = rs.randint(0, 3, size=n)
    x = centers[labels] + rs.randn(n, 10)
    return x, np.eye(3)[labels]


if __name__ == "__main__":
    # Model parameters
    layer_sizes = [10, 32, 32, 3]
    L2_reg = 1.0

    # Training parameters
    param_scale = 0.1
    batch_size = 64
    num_epochs = 5
    step_size = 0.01

    rs = npr.RandomState(1)
    centers = rs.randn(3, 10) * 1.5
    train_images, train_labels = synthetic_data(1024, rs, centers)
    test_images, test_labels = synthetic_data(512, rs, centers)
    init_params = init_random_params(param_scale, layer_sizes)

    num_batches = int(np.ceil(len(train_images) / batch_size))

    def batch_indices(iter):
        idx = iter % num_batches
        return slice(idx * batch_size, (idx + 1) * batch_size)

    # Define training objective
    def objective(params, iter):
        idx = batch_indices(iter)
        return -log_posterior(params, train_images[idx], train_labels[idx], L2_reg)

    # Get gradient of objective using autograd.
    objective_grad = grad(objective)

    print("     Epoch     |    Train accuracy  |       Test accuracy  ")

    def print_perf(params, iter, gradient):
        if iter % num_batches == 0:
            train_acc = accuracy(params, train_images, train_labels)
            test_acc = accuracy(params, test_images, test_labels)
            print("{:15}|{:20}|{:20}".format(iter // num_batches, train_acc, test_acc))

    # The optimizers provided can optimize lists, tuples, or dicts of parameters.
    optimized_params = adam(objective_grad, init_params, step_size=step_size,
                            num_iters=num_epochs * num_batches, callback=print_perf)
    final = accuracy(optimized_params, test_images, test_labels)
    print(f"final test accuracy {final:.3f}")
    assert final > 0.9
