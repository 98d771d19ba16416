"""The project's build backend: setuptools' own, with one default changed.

``pip install -e .`` installs in setuptools' *strict* editable mode unless told otherwise.
The repository keeps ``transforms/`` and ``backends/`` at its top level and maps them to
``autodiff.transforms`` and ``autodiff.backends`` (``[tool.setuptools.package-dir]``).
setuptools' default (lenient) editable mode serves such a mapping with an import hook, which
Python runs but static tools (mypy, pyright, IDEs) cannot follow: for them ``autodiff`` is
not installed. The strict mode instead builds ``build/__editable__.*/autodiff/`` as a tree
of links to the source files and puts that folder on ``sys.path`` with a plain ``.pth``
line, so Python and the static tools see the same package. Edits to existing files show at
once; a *new* module needs the install run again. setuptools reads the mode only from
``--config-settings`` (there is no pyproject.toml key), hence this wrapper; an explicit
``pip install -e . --config-settings editable_mode=lenient`` still wins.
"""
from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every other hook unchanged)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    settings = dict(config_settings or {})
    settings.setdefault("editable_mode", "strict")
    return _setuptools.build_editable(wheel_directory, settings, metadata_directory)
