"""The version of dpbook, the library and the book's edition: its one home.

``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``), the book shows it (``_config.yml`` is
filled in by the site extension) and ``dpbook.__version__`` is this string.  Change it here only,
with a new section of ``CHANGELOG.md``.
"""

__version__ = "0.1.0"
