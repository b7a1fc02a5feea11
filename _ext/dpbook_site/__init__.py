"""Sphinx extension that makes the built book self-contained, light, launchable and printable.

Everything runs inside ``jupyter-book build .``, so the plain build command produces the published
site.  One module per concern:

:mod:`.assets`
    MathJax 3, the ipywidgets HTML manager and axe-core fetched from npm into ``_offline/`` (the
    site works with no network), and ``/favicon.ico``.
:mod:`.lite`
    the JupyterLite site (``lite/``) with the chapters and the dpbook wheel, and the launch link.
:mod:`.page`
    each page as the reader gets it: the views' frames written out as files (a chapter loads only
    the frames on show), scripts once, the bibliography's list semantics, the launch button.
:mod:`.checks`
    every image says what it shows (alt text from captions; the strict build fails on an image
    without one).
:mod:`.cache`
    the execution cache keyed on the library's hash; the kernels' encrypted transport.
:mod:`.nbval_cache`
    a pytest plugin (registered by the root ``conftest.py``, not by Sphinx): the chapters the test
    command runs through nbval are stored in that cache, so the build does not execute them again.
:mod:`.latex`
    the print edition's fixes, and the site's page about the print edition (``print-edition.html``).

The site's JavaScript lives in ``_static/`` (jupyter-book loads every file there on every page).
Nothing here imports the book's packages (``dpbook``, ``dpbook_book``): the wheel and the cache
hash are made from their files.

Configuration (``sphinx: config:`` in ``_config.yml``):

``dpbook_offline_packages``
    ``{npm spec: {source path inside the package: destination under _offline/}}``.
``dpbook_lite``
    build the JupyterLite site (default ``True``; ``DPBOOK_LITE=0`` in the environment skips it
    for quick local builds).
"""

from __future__ import annotations

from . import assets, cache, checks, latex, lite, page
from .cache import LIBRARY_FILES, LIBRARY_PACKAGES, library_hash
from .checks import caption_alt, meaningless_alt
from .latex import write_print_page
from .lite import author_year, lite_markdown, solution_boundaries

__all__ = [
    "LIBRARY_FILES",
    "LIBRARY_PACKAGES",
    "author_year",
    "caption_alt",
    "library_hash",
    "lite_markdown",
    "meaningless_alt",
    "setup",
    "solution_boundaries",
    "write_print_page",
]


def on_build_finished(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    assets.check_site(app)
    latex.write_print_page(app.outdir)
    lite.on_build_finished(app, exception)


def setup(app):
    app.add_config_value("dpbook_offline_packages", None, "html")
    app.add_config_value("dpbook_lite", True, "html")
    cache.encrypt_kernel_transport()
    app.connect("config-inited", cache.on_config_inited)
    app.connect("builder-inited", assets.on_builder_inited)
    app.connect("builder-inited", latex.on_latex_builder_inited, priority=900)
    app.connect("env-get-updated", latex.on_env_get_updated, priority=900)
    app.add_post_transform(latex.print_solution_titles())
    app.add_post_transform(latex.print_proofs())
    app.add_post_transform(latex.print_part_titles())
    app.add_post_transform(latex.print_bibliography())
    app.connect("doctree-resolved", checks.on_doctree_resolved)
    app.connect("html-page-context", page.on_page_context, priority=600)
    app.connect("build-finished", on_build_finished)
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}
