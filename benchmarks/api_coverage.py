"""Name coverage of autodiff's numeric namespaces against the installed JAX (issue 14).

For each JAX namespace this enumerates its public names, looks each one up in the
matching autodiff namespace and prints a table (names JAX has, names we have, the share,
and the share of the names that apply to real arrays), then every missing name with the
reason it is missing. Run it in the ``bench`` environment (it imports jax)::

    python benchmarks/api_coverage.py            # table and missing names
    python benchmarks/api_coverage.py --markdown # the table as Markdown

A name counts as present when the autodiff namespace has an attribute of that name (for
``jax.scipy.stats``: a distribution module of that name, and then each of its functions).

Curated namespaces (issue 36). ``jax.tree_util``, ``jax.debug`` and ``jax.random`` count
every public name of the module. ``jax.lax`` counts :data:`LAX_CURATED`: the functions that
JAX's own API reference page (``docs/jax.lax.rst``: Operators, Control flow, Custom
gradient, Parallel and Sharding sections) lists for users; the ~190 ``*_p`` primitive
objects, argument classes and internal helpers that ``dir(jax.lax)`` also shows are left
out, and ``jax.lax.linalg`` is its own module. ``autograd`` (1.x, its own package) counts
:data:`AUTOGRAD_CURATED`: the names its users import (``autograd``'s ``__init__``, the
operators ``autograd.differential_operators`` defines, ``autograd.extend`` whole (the
documented way to add primitives), the container functions of ``autograd.builtins``,
``autograd.misc`` and its modules' functions, the checkers of ``autograd.test_util``, and
``autograd.wrap_util``). Left out there: ``autograd.numpy``/``autograd.scipy`` (the numpy
rows above measure them), the internal modules ``core``, ``tracer``, ``util``,
``misc.tracers``, and the Box/VSpace subclasses of ``autograd.builtins``
(``SequenceBox``, ``DictVSpace``, ...) that implement autograd's own boxing.
"""
import argparse
import sys
import types

# Why a JAX name has no counterpart here. Names that match none of these are reported
# as "not done" so that a gap cannot hide behind a reason.
_LOW_PRECISION = ("low-precision dtype numpy has no type for (ml_dtypes: bfloat16, float8, "
                  "float6, float4, int4, ...)")
_COMPLEX = "complex results: needs complex numbers (issue 16)"
REASONS = {
    "jax.numpy": {
        **{n: _LOW_PRECISION for n in (
            "bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
            "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
            "float8_e8m0fnu", "int1", "int2", "int4", "uint1", "uint2", "uint4")},
    },
    "jax.numpy.fft": {},
    "jax.numpy.linalg": {},
    "jax.scipy.special": {"wofz": _COMPLEX + " (the Faddeeva function of a complex argument)"},
    "jax.scipy.linalg": {},
    "jax.nn": {
        "scaled_dot_general": "block-scaled quantized matmul: quantizes its operands to float8/float4 "
                              "(mxfp8, nvfp4), dtypes numpy lacks; scaled_matmul is here",
        "get_scaled_dot_general_config": "returns the float8/float4 block-scale configurations "
                                         "scaled_dot_general needs (see there)",
    },
    "jax.nn.initializers": {},
    "jax.scipy.stats": {},
    "jax.tree_util": {},
    "jax.debug": {},
    "jax.random": {
        "random_gamma_p": "JAX's primitive object behind gamma; here gamma is a composition "
                          "of existing primitives (rejection loop + implicit derivative), "
                          "so there is no primitive to bind",
    },
    "jax.lax": {
        **{n: "moves data between the devices of a pmap/shard_map; autodiff runs on one "
              "device (the collectives of a named vmap are here)"
           for n in ("psend", "precv", "ragged_all_to_all")},
        "after_all": "XLA tokens order side effects between devices and host; autodiff has "
                     "no tokens (debug callbacks run in program order)",
        "rng_uniform": "XLA's stateful RngUniform (JAX marks it experimental); use "
                       "ad.random.uniform with a key",
    },
    "autograd": {
        "JVPNode": "autograd's per-operation trace node; autodiff traces into IR equations, "
                   "with jvp/vjp rules per primitive (extend.defjvp/defvjp)",
        "VJPNode": "autograd's per-operation trace node; autodiff traces into IR equations, "
                   "with jvp/vjp rules per primitive (extend.defjvp/defvjp)",
        "SparseObject": "autograd's sparse cotangent for container indexing; autodiff's "
                        "cotangents of pytrees are pytrees (zeros are symbolic in the IR)",
    },
}

# jax.lax: the functions docs/jax.lax.rst lists (JAX's API reference), see the module docstring
LAX_CURATED = """
abs acos acosh add after_all approx_max_k approx_min_k argmax argmin asin asinh atan atan2 atanh
batch_matmul bessel_i0e bessel_i1e betainc bitcast_convert_type bitwise_and bitwise_not bitwise_or
bitwise_xor population_count broadcast broadcast_in_dim broadcast_shapes broadcast_to_rank
broadcasted_iota cbrt ceil clamp clz collapse complex composite concatenate conj conv
convert_element_type conv_dimension_numbers conv_general_dilated conv_general_dilated_local
conv_general_dilated_patches conv_transpose conv_with_general_padding cos cosh cumlogsumexp cummax
cummin cumprod cumsum digamma div dot dot_general dynamic_index_in_dim dynamic_slice
dynamic_slice_in_dim dynamic_update_index_in_dim dynamic_update_slice dynamic_update_slice_in_dim
empty eq erf erfc erf_inv exp exp2 expand_dims expm1 fft floor full full_like gather ge gt igamma
igamma_grad_a igammac imag index_in_dim index_take integer_pow iota is_finite le lgamma log log1p
logistic lt max min mul ne neg nextafter optimization_barrier pad platform_dependent polygamma pow
random_gamma_grad ragged_all_to_all ragged_dot ragged_dot_general real reciprocal reduce reduce_and
reduce_max reduce_min reduce_or reduce_precision reduce_prod reduce_sum reduce_window reduce_xor rem
reshape rev rng_bit_generator rng_uniform round rsqrt scatter scatter_add scatter_apply scatter_max
scatter_min scatter_mul scatter_sub shift_left shift_right_arithmetic shift_right_logical sign sin
sinh slice slice_in_dim sort sort_key_val split sqrt square squeeze sub tan tanh top_k transpose zeta
associative_scan cond fori_loop map scan select select_n switch while_loop
stop_gradient custom_linear_solve custom_root
all_gather all_to_all psum psum_scatter pmax pmin pmean ppermute pshuffle pswapaxes axis_index
axis_size psend precv
with_sharding_constraint
""".split()

# autograd: (module, names) that its users import, see the module docstring
AUTOGRAD_CURATED = [
    ("autograd", "checkpoint deriv dict elementwise_grad grad grad_and_aux grad_named hessian "
                 "hessian_tensor_product hessian_vector_product holomorphic_grad isinstance "
                 "jacobian list make_ggnvp make_hvp make_jvp make_vjp multigrad_dict primitive "
                 "tensor_jacobian_product tuple type value_and_grad vector_jacobian_product"),
    ("autograd.differential_operators",
     "grad elementwise_grad deriv jacobian holomorphic_grad grad_named hessian make_hvp "
     "hessian_tensor_product hessian_vector_product tensor_jacobian_product "
     "vector_jacobian_product make_jvp_reversemode make_ggnvp value_and_grad grad_and_aux "
     "multigrad_dict checkpoint make_vjp make_jvp"),
    ("autograd.extend", "Box JVPNode SparseObject VJPNode VSpace def_linear defjvp defjvp_argnum "
                        "defjvp_argnums defvjp defvjp_argnum defvjp_argnums notrace_primitive "
                        "primitive register_notrace vspace"),
    ("autograd.builtins", "tuple list dict isinstance type"),
    ("autograd.misc", "flatten const_graph"),
    ("autograd.misc.flatten", "flatten flatten_func"),
    ("autograd.misc.optimizers", "unflatten_optimizer sgd rmsprop adam"),
    ("autograd.misc.fixed_points", "fixed_point"),
    ("autograd.test_util", "check_grads check_vjp check_jvp check_equivalent combo_check "
                           "scalar_close make_numerical_jvp"),
    ("autograd.wrap_util", "unary_to_nary wraps wrap_nary_f get_name get_doc"),
]


def _public(mod):
    return sorted(n for n in dir(mod) if not n.startswith("_"))


def _namespaces():
    import jax.numpy as jnp
    import jax.nn as jnn
    import jax.nn.initializers as jinit
    import jax.scipy.linalg as jsl
    import jax.scipy.special as jss

    import autodiff as ad
    import autodiff.numpy as anp
    import autodiff.scipy.linalg as SL
    import autodiff.scipy.special as S
    return [("jax.numpy", jnp, anp), ("jax.numpy.linalg", jnp.linalg, anp.linalg),
            ("jax.numpy.fft", jnp.fft, anp.fft),
            ("jax.scipy.special", jss, S), ("jax.scipy.linalg", jsl, SL), ("jax.nn", jnn, ad.nn),
            ("jax.nn.initializers", jinit, ad.nn.initializers)]


def _stats_rows():
    """jax.scipy.stats: its top-level functions, its distribution modules, and each
    module's functions, as (label, present) pairs."""
    import jax.scipy.stats as jst

    import autodiff.scipy.stats as ST
    rows = []
    for name in _public(jst):
        obj = getattr(jst, name)
        if isinstance(obj, types.ModuleType):
            ours = getattr(ST, name, None)
            rows.append((name, ours is not None))
            for fn in _public(obj):
                if callable(getattr(obj, fn)) and not isinstance(getattr(obj, fn), types.ModuleType):
                    rows.append((f"{name}.{fn}", ours is not None and hasattr(ours, fn)))
        elif callable(obj):
            rows.append((name, hasattr(ST, name)))
    return rows


def _curated_rows():
    """(label, names, present(name) -> bool) for the namespaces of issue 36."""
    import importlib

    import jax.debug as jd
    import jax.lax as jl
    import jax.random as jr
    import jax.tree_util as jtu

    import autodiff as ad
    rows = [("jax.tree_util", _public(jtu), lambda n: hasattr(ad.tree_util, n)),
            ("jax.debug", _public(jd), lambda n: hasattr(ad.debug, n)),
            ("jax.random", _public(jr), lambda n: hasattr(ad.random, n))]
    absent = [n for n in LAX_CURATED if not hasattr(jl, n)]
    if absent:
        print(f"note: the curated jax.lax list names {absent}, absent from this JAX", file=sys.stderr)
    rows.append(("jax.lax (curated)", sorted(set(LAX_CURATED)), lambda n: hasattr(ad.lax, n)))

    def ours(qual):
        mod, _, name = qual.rpartition(".")
        try:
            m = importlib.import_module(mod.replace("autograd", "autodiff", 1))
        except ImportError:
            return False
        return hasattr(m, name)
    qual = [f"{m}.{n}" for m, names in AUTOGRAD_CURATED for n in names.split()]
    rows.append(("autograd (curated)", qual, ours))
    return rows


def coverage():
    """[(namespace, n_jax, n_ours, n_applicable, missing: [(name, reason or None)])]."""
    out = []
    for label, jmod, amod in _namespaces():
        names = _public(jmod)
        if label == "jax.numpy":
            names = [n for n in names if n not in ("linalg", "fft")]      # their own rows
        missing = [(n, REASONS[label].get(n)) for n in names if not hasattr(amod, n)]
        na = sum(1 for _, r in missing if r is not None)
        out.append((label, len(names), len(names) - len(missing), len(names) - na, missing))
    rows = _stats_rows()
    dists = [r for r in rows if "." not in r[0]]
    missing = [(n, REASONS["jax.scipy.stats"].get(n)) for n, ok in rows if not ok]
    na = sum(1 for _, r in missing if r is not None)
    out.append(("jax.scipy.stats (names)", len(rows), sum(ok for _, ok in rows), len(rows) - na, missing))
    out.append(("jax.scipy.stats (modules)", len(dists), sum(ok for _, ok in dists), len(dists), []))
    for label, names, present in _curated_rows():
        reasons = REASONS[label.split(" ")[0]]
        missing = [(n, reasons.get(n.rpartition(".")[2])) for n in names if not present(n)]
        na = sum(1 for _, r in missing if r is not None)
        out.append((label, len(names), len(names) - len(missing), len(names) - na, missing))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args(argv)
    try:
        import jax
    except ImportError:
        print("jax is not installed: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    rows = coverage()
    head = ("namespace", "JAX names", "ours", "share", "real-array names", "share of those")
    lines = [(ns, str(nj), str(no), f"{100 * no / nj:.1f}%", str(napp), f"{100 * no / napp:.1f}%")
             for ns, nj, no, napp, _ in rows]
    print(f"name coverage against jax {jax.__version__}\n")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        w = [max(len(r[i]) for r in [head] + lines) for i in range(len(head))]
        for r in [head] + lines:
            print("  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r)))
    print()
    undone = 0
    for ns, _, _, _, missing in rows:
        for name, reason in missing:
            print(f"missing {ns}: {name}: {reason or 'NOT DONE'}")
            undone += reason is None
    print(f"\n{undone} name(s) missing without a reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
