"""IR-to-IR passes: jvp, partial evaluation (linearize), transpose, vmap, remat, simplification.

Every pass is a pure function of jaxprs; the user-facing wrappers in
:mod:`autodiff.api` trace, call these, and evaluate the result.
"""
