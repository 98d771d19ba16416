"""Optimizers (work in progress: issue 8)."""
