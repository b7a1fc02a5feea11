"""The execution cache: keyed on the library, so a changed library executes every chapter again.

Also the kernels' transport: the kernels that execute the book talk over CurveZMQ-encrypted TCP.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

#: the code whose change re-executes every chapter (``execute_notebooks: cache``): the packages' modules
#: and the pinned requirements, relative to the book's root
LIBRARY_PACKAGES = ("dpbook", "dpbook_book")
LIBRARY_FILES = ("requirements.txt",)


def library_hash(root, packages=LIBRARY_PACKAGES, files=LIBRARY_FILES) -> str:
    """A short sha256 of every ``*.py`` under ``packages`` and of ``files`` (names and contents).

    The notebooks' execution cache lives in a folder named after it, so a changed library (or
    requirement) finds an empty cache and every chapter executes again; jupyter-cache itself only
    keys a notebook on its own code cells.
    """
    root = Path(root)
    paths = sorted(
        p
        for package in packages
        for p in (root / package).rglob("*.py")
        if "__pycache__" not in p.parts
    )
    paths += [root / f for f in files if (root / f).is_file()]
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def chapters(root) -> list[Path]:
    """The notebooks of ``_toc.yml`` under ``root``, in its order (the build's ``only_build_toc_files``):
    the chapters the build executes."""
    import yaml

    root = Path(root)
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = []

    def walk(entry):
        if isinstance(entry, dict):
            if "file" in entry:
                files.append(entry["file"])
            for value in entry.values():
                if isinstance(value, list):
                    for item in value:
                        walk(item)

    walk(toc)
    paths = [root / f"{f}.ipynb" for f in files]
    return [p for p in paths if p.is_file()]


def on_config_inited(app, config):
    """Key the execution cache on the library: ``<build dir>/.jupyter_cache/<library_hash>``.

    Runs before myst-nb reads ``nb_execution_cache_path`` (on ``builder-inited``); every builder of
    one ``--path-output`` (html, then pdflatex) shares the folder, so the PDF build reuses the
    outputs of the HTML build instead of executing the notebooks again.  An explicit
    ``execute: cache:`` path in ``_config.yml`` is kept as the parent folder.
    """
    base = (
        config.nb_execution_cache_path
        or Path(app.outdir).resolve().parent / ".jupyter_cache"
    )
    path = Path(base) / library_hash(app.confdir)
    config.nb_execution_cache_path = str(path)
    logger.info(f"[dpbook_site] notebook execution cache keyed on the library: {path}")


def encrypt_kernel_transport() -> bool:
    """Have the kernels that execute the book talk over CurveZMQ-encrypted TCP.

    ipykernel (>= 7) warns "Kernel is running over TCP without encryption" on its stderr, once per
    notebook, whenever its kernel manager gives it no CurveZMQ keys.  jupyter_client's
    ``KernelManager.transport_encryption`` decides that; its default ``"disabled"`` provisions no
    keys even though the ipykernel kernelspec declares ``supported_encryption: ["curve"]``.  myst-nb
    starts its kernels through nbclient with an empty traitlets config (no config file is read in
    the Sphinx process), so the policy is set here, as the default of that trait: ``"auto"``
    provisions keys for every kernelspec that supports them.  Returns whether it was set (no, for a
    jupyter_client without the trait or a libzmq without CurveZMQ).
    """
    try:
        import zmq
        from jupyter_client.manager import KernelManager
    except ImportError:
        return False
    trait = KernelManager.class_traits().get("transport_encryption")
    if trait is None or not zmq.has("curve"):
        return False
    trait.default_value = "auto"
    return True
