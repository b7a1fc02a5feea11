"""Sphinx extension that makes the built book self-contained and launchable.

Two jobs, both done inside ``jupyter-book build .`` so that the plain build command produces the
published site:

1. **Offline assets.**  MathJax 3 and the ipywidgets HTML manager (its self-contained ``embed.js``,
   which renders the widget snapshots without RequireJS) are fetched at build time with
   ``npm pack`` (exact versions; npm checks each tarball's integrity) from the npm registry into
   a cache under ``_build/`` (never committed), and copied into the site under ``_offline/``
   through ``html_extra_path`` — not into ``_static/``, whose every ``.js``/``.css`` jupyter-book
   would inject into every page.  ``_config.yml`` points ``mathjax_path`` and ``nb_ipywidgets_js``
   at these copies; this extension checks that it does, and fails the build loudly if a package
   cannot be fetched or a referenced file is missing.  It also writes two small files of its own
   there: a shim letting the widget manager typeset through MathJax 3, and ``/favicon.ico``.

2. **JupyterLite.**  After the HTML is written, the ``dpbook`` package is built into a pure-Python
   wheel and a JupyterLite site is built into ``_build/html/lite/`` with the book's notebooks as
   contents and the wheel in its piplite index, so ``%pip install dpbook`` works in the browser.
   The "JupyterLite" launch button of each chapter is rewritten to a page-relative link into it.

Configuration (``sphinx: config:`` in ``_config.yml``):

``dpbook_offline_packages``
    ``{npm spec: {source path inside the package: destination under _offline/}}``.
``dpbook_lite``
    build the JupyterLite site (default ``True``; ``DPBOOK_LITE=0`` in the environment skips it
    for quick local builds).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path, PurePosixPath

from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

OFFLINE_DIR = "_offline"
LITE_DIR = "lite"
LITE_INSTALL_CELL = (
    "# JupyterLite only: install the book's library (served by this site) and its widget toolkit.\n"
    "%pip install -q dpbook ipywidgets"
)

DEFAULT_PACKAGES = {
    "mathjax@3.2.2": {"es5": "mathjax"},
    "@jupyter-widgets/html-manager@1.0.15": {"dist": "html-manager"},
}

_SKIP_SUFFIXES = (".map", ".ts", ".md")


def _cache_root(app) -> Path:
    override = os.environ.get("DPBOOK_ASSET_CACHE")
    if override:
        return Path(override).resolve()
    return Path(app.outdir).resolve().parent / ".offline-cache"


def _npm_pack(spec: str, dest: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise ExtensionError(
            "dpbook_site: `npm` is not on PATH; it is needed to fetch the offline assets "
            f"({spec}) from the npm registry"
        )
    proc = subprocess.run(
        [npm, "pack", spec, "--json", "--pack-destination", str(dest)],
        capture_output=True, text=True, timeout=300,
    )
    if proc.returncode != 0:
        raise ExtensionError(f"dpbook_site: `npm pack {spec}` failed:\n{proc.stderr.strip()}")
    start = proc.stdout.find("[")
    try:
        filename = json.loads(proc.stdout[start:])[0]["filename"]
    except (ValueError, LookupError) as exc:
        raise ExtensionError(f"dpbook_site: unexpected output of `npm pack {spec}`: {proc.stdout!r}") from exc
    # npm names scoped tarballs "scope-name-version.tgz"
    return dest / filename.lstrip("@").replace("/", "-")


def _extract(tarball: Path, mapping: dict, target: Path) -> int:
    """Extract the members of ``tarball`` under each source path into ``target/destination``."""
    count = 0
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            rel = PurePosixPath(member.name).relative_to("package")
            for src, dst in mapping.items():
                if rel == PurePosixPath(src):
                    out = target / dst
                elif PurePosixPath(src) in rel.parents:
                    if rel.name.endswith(_SKIP_SUFFIXES):
                        break
                    out = target / dst / rel.relative_to(src)
                else:
                    continue
                out.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(member) as fh:
                    out.write_bytes(fh.read())
                count += 1
                break
    return count


def fetch_offline_assets(app) -> Path:
    """Fetch every configured npm package (once; cached) and return the ``html_extra_path`` root."""
    packages = app.config.dpbook_offline_packages or DEFAULT_PACKAGES
    key = hashlib.sha256(json.dumps(packages, sort_keys=True).encode()).hexdigest()[:12]
    root = _cache_root(app) / key
    site = root / "site"
    stamp = root / "complete.json"
    if stamp.exists():
        return site
    shutil.rmtree(root, ignore_errors=True)
    target = site / OFFLINE_DIR
    target.mkdir(parents=True)
    t0 = time.perf_counter()
    manifest = {}
    with tempfile.TemporaryDirectory() as tmp:
        for spec, mapping in packages.items():
            tarball = _npm_pack(spec, Path(tmp))
            n = _extract(tarball, mapping, target)
            if n == 0:
                raise ExtensionError(f"dpbook_site: {spec} holds none of {sorted(mapping)}")
            manifest[spec] = n
    stamp.write_text(json.dumps(manifest, indent=1))
    logger.info(f"[dpbook_site] fetched offline assets {manifest} in {time.perf_counter() - t0:.1f} s")
    return site


#: The widget manager typesets widget labels through MathJax 2's ``MathJax.Hub.Queue``; the book
#: loads MathJax 3, which has no ``Hub``.  This shim forwards those calls to MathJax 3.
MATHJAX3_SHIM = """\
(function () {
  function typeset(cmd) {
    var mj = window.MathJax, el = cmd && cmd[2];
    if (!mj || !mj.startup || !mj.startup.promise) return;
    mj.startup.promise.then(function () {
      return mj.typesetPromise ? mj.typesetPromise(el ? [el] : undefined) : null;
    });
  }
  function install() {
    if (window.MathJax && !window.MathJax.Hub) window.MathJax.Hub = {Queue: typeset};
  }
  install();
  document.addEventListener("DOMContentLoaded", install);
})();
"""


def _write_if_changed(path: Path, data: bytes) -> None:
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)


def write_generated(app, site: Path) -> None:
    """Write the files the extension makes itself: the MathJax shim, and ``/favicon.ico``.

    Browsers ask for ``/favicon.ico`` on pages without an icon link (the root redirect page); it
    is the configured PNG favicon in an ICO container (a directory entry pointing at the PNG).
    """
    _write_if_changed(site / OFFLINE_DIR / "widgets-mathjax3.js", MATHJAX3_SHIM.encode())
    favicon = app.config.html_favicon
    if favicon and "://" not in favicon and favicon.endswith(".png"):
        png = (Path(app.confdir) / favicon).read_bytes()
        width, height = struct.unpack(">II", png[16:24])
        header = struct.pack("<HHH", 0, 1, 1)
        entry = struct.pack("<BBBBHHII", width % 256, height % 256, 0, 0, 1, 32, len(png), 6 + 16)
        _write_if_changed(site / "favicon.ico", header + entry + png)


def _local_targets(app):
    """The site-relative paths of the local assets the configuration points pages to."""
    paths = [app.config.mathjax_path, *getattr(app.config, "nb_ipywidgets_js", {}).keys()]
    for p in paths:
        if "://" in p:
            raise ExtensionError(
                f"dpbook_site: {p!r} is a remote URL; the book must load it from {OFFLINE_DIR}/ to work offline"
            )
        yield os.path.normpath(os.path.join("_static", p))


def on_builder_inited(app):
    if app.builder.format != "html":
        return
    site = fetch_offline_assets(app)
    write_generated(app, site)
    for rel in _local_targets(app):
        if not (site / rel).is_file():
            raise ExtensionError(
                f"dpbook_site: the configuration loads {rel!r} but the fetched assets hold no such file"
            )
    extra = [str(p) for p in app.config.html_extra_path]
    if str(site) not in extra:
        app.config.html_extra_path = [*extra, str(site)]


def on_page_context(app, pagename, templatename, context, doctree):
    """Point the theme's JupyterLite launch button at the lite site built with the book.

    Also drop repeated scripts: sphinx-thebe and sphinx-togglebutton register their inline
    scripts twice under jupyter-book, and a repeated ``const`` declaration is a JavaScript error.
    """
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        seen, unique = set(), []
        for js in scripts:
            key = (os.fspath(getattr(js, "filename", js) or ""),
                   tuple(sorted(getattr(js, "attributes", {}).items())))
            if key not in seen:
                seen.add(key)
                unique.append(js)
        scripts[:] = unique
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("text") == "JupyterLite" and "?path=" in button.get("url", ""):
                path = button["url"].split("?path=", 1)[1].removeprefix("./")
                button["url"] = context["pathto"](f"{LITE_DIR}/lab/index.html", 1) + "?path=" + path


def _lite_contents(app, dest: Path) -> int:
    """Copy every notebook of the book into ``dest``, each opened by a cell installing dpbook."""
    import nbformat

    n = 0
    for docname in sorted(app.env.found_docs):
        src = Path(app.env.doc2path(docname))
        if src.suffix != ".ipynb":
            continue
        rel = src.relative_to(app.srcdir)
        nb = nbformat.read(src, as_version=4)
        nb.cells.insert(0, nbformat.v4.new_code_cell(LITE_INSTALL_CELL))
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out)
        n += 1
    return n


def build_wheel(repo: Path, src: Path, dest: Path) -> Path:
    """Build dpbook's pure-Python wheel from a clean copy of the package (the tree stays untouched)."""
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (repo / name).is_file():
            shutil.copy2(repo / name, src / name)
    shutil.copytree(repo / "dpbook", src / "dpbook", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dest), str(src)],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise ExtensionError(f"dpbook_site: building the dpbook wheel failed:\n{proc.stderr}")
    built = sorted(dest.glob("dpbook-*-py3-none-any.whl"))
    if not built:
        raise ExtensionError(f"dpbook_site: no pure-Python dpbook wheel in {dest}")
    with zipfile.ZipFile(built[-1]) as whl:
        names = set(whl.namelist())
    expected = {p.relative_to(repo).as_posix() for p in (repo / "dpbook").rglob("*.py")}
    if missing := sorted(expected - names):
        raise ExtensionError(
            f"dpbook_site: the dpbook wheel lacks {missing}; list every subpackage in pyproject.toml "
            "([tool.setuptools.packages.find] include = [\"dpbook*\"])"
        )
    return built[-1]


def build_lite(app):
    """Build the dpbook wheel and the JupyterLite site into ``<outdir>/lite``."""
    t0 = time.perf_counter()
    work = Path(app.outdir).resolve().parent / ".lite"
    shutil.rmtree(work, ignore_errors=True)
    wheels = work / "lite-dir" / "pypi"
    contents = work / "contents"
    wheels.mkdir(parents=True)
    contents.mkdir(parents=True)
    build_wheel(Path(app.confdir).resolve(), work / "src", wheels)
    n_nb = _lite_contents(app, contents)
    (work / "lite-dir" / "jupyter-lite.json").write_text(json.dumps({
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {"appName": "dpbook (JupyterLite)"},
    }))
    out = Path(app.outdir) / LITE_DIR
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable, "-m", "jupyter", "lite", "build",
        "--lite-dir", str(work / "lite-dir"),
        "--contents", str(contents),
        "--output-dir", str(out),
        "--apps", "lab", "--apps", "notebooks",
    ]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ExtensionError(
            f"dpbook_site: `jupyter lite build` failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )
    shipped = sorted((out / "pypi").glob("dpbook-*.whl"))
    if not shipped:
        raise ExtensionError(f"dpbook_site: the lite site at {out} holds no dpbook wheel")
    logger.info(
        f"[dpbook_site] JupyterLite site with {n_nb} notebooks and {shipped[0].name} "
        f"built in {time.perf_counter() - t0:.1f} s"
    )


def on_build_finished(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    missing = [rel for rel in _local_targets(app) if not (Path(app.outdir) / rel).is_file()]
    if missing:
        raise ExtensionError(f"dpbook_site: the site is missing its offline assets {missing}")
    if app.config.dpbook_lite and os.environ.get("DPBOOK_LITE", "1") != "0":
        build_lite(app)


def setup(app):
    app.add_config_value("dpbook_offline_packages", None, "html")
    app.add_config_value("dpbook_lite", True, "html")
    app.connect("builder-inited", on_builder_inited)
    app.connect("html-page-context", on_page_context, priority=600)
    app.connect("build-finished", on_build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
