"""Name coverage of autodiff's numeric namespaces against the installed JAX (issue 14).

For each JAX namespace this enumerates its public names, looks each one up in the
matching autodiff namespace and prints a table (names JAX has, names we have, the share,
and the share of the names that apply to real arrays), then every missing name with the
reason it is missing. Run it in the ``bench`` environment (it imports jax)::

    python benchmarks/api_coverage.py            # table and missing names
    python benchmarks/api_coverage.py --markdown # the table as Markdown

A name counts as present when the autodiff namespace has an attribute of that name (for
``jax.scipy.stats``: a distribution module of that name, and then each of its functions).
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
}


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
