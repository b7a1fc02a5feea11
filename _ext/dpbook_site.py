"""Sphinx extension that makes the built book self-contained and launchable.

Three jobs, all done inside ``jupyter-book build .`` so that the plain build command produces the
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

3. **Execution cache.**  ``execute_notebooks: cache`` keeps each chapter's outputs in
   ``<build dir>/.jupyter_cache/<hash of the library and requirements.txt>``, so a changed library
   executes every chapter again and the PDF build reuses the HTML build's outputs.

Neither of the first two runs for another builder (the print edition's LaTeX), which gets its own
fixes (numbering as on the site, "Solution to Exercise N.M", proofs, the bibliography in place).

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
import re
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
    # the accessibility engine the site test injects into each page (no page loads it itself)
    "axe-core@4.11.1": {"axe.min.js": "axe/axe.min.js"},
}

#: the packages the dpbook wheel must hold (the library, and the book's support code)
WHEEL_PACKAGES = ("dpbook", "dpbook_book")

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
    # names each slider handle after its label, for screen readers (its one home is the views' package)
    from dpbook_book.widgets import SLIDER_LABELS_JS

    _write_if_changed(site / OFFLINE_DIR / "widgets-labels.js", SLIDER_LABELS_JS.encode())
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
    # docutils writes the bibliography as a role="list" whose entries have role="doc-biblioentry",
    # which is not a list item: screen readers (and axe's aria-required-children) want listitems
    body = context.get("body")
    if isinstance(body, str) and 'class="citation-list"' in body:
        context["body"] = re.sub(r'(<div class="citation" [^>]*role=")doc-biblioentry(")', r"\1listitem\2", body)
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            if button.get("text") == "JupyterLite" and "?path=" in button.get("url", ""):
                path = button["url"].split("?path=", 1)[1].removeprefix("./")
                button["url"] = context["pathto"](f"{LITE_DIR}/lab/index.html", 1) + "?path=" + path


#: the roles jupyterlab-myst cannot resolve in a lone notebook (no bibliography, no other chapters):
#: the lite copies get the text the book shows for them instead
LITE_ROLE = re.compile(r"\{(cite:t|cite:p|cite:ps|cite:ts|cite|prf:ref|ref|numref|eq|doc)\}`([^`]*)`")
#: sphinx-exercise's gated solutions span several cells; jupyterlab-myst knows no such directive
LITE_SOLUTION_START = re.compile(r"^(`{3,}|:{3,})\{solution-start\}[^\n]*\n(?::[\w-]+:[^\n]*\n)*\1[ \t]*$", re.M)
LITE_SOLUTION_END = re.compile(r"^(`{3,}|:{3,})\{solution-end\}[^\n]*\n(?::[\w-]+:[^\n]*\n)*\1[ \t]*$", re.M)


def author_year(bib_path):
    """``{key: (authors, year)}`` of a BibTeX file, as the book cites in author-year style: "Liu",
    "McGlinchey and Mason", "Croft et al." (the text of a citation in the JupyterLite lab and in the
    assignments of ``tools/assignments.py``, where no Sphinx resolves it)."""
    from pybtex.database import parse_file
    from pybtex.richtext import Text

    def plain(latex):
        return Text.from_latex(latex).render_as("text")

    out = {}
    for key, entry in parse_file(str(bib_path)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        last = [plain(" ".join(p.prelast_names + p.last_names)) for p in people]
        if len(last) > 2:
            names = f"{last[0]} et al."
        elif len(last) == 2:
            names = f"{last[0]} and {last[1]}"
        else:
            names = last[0] if last else key
        out[key] = (names, plain(entry.fields.get("year", "n.d.")))
    return out


def _bib_authors(app) -> dict:
    """``{key: (author text, year)}`` for the author-year citations, from ``bibtex_bibfiles``."""
    out = {}
    for bib in getattr(app.config, "bibtex_bibfiles", []) or []:
        out.update(author_year(Path(app.confdir) / bib))
    return out


class LiteText:
    """The text the book shows for a role, resolved from the build environment (for the lite copies)."""

    def __init__(self, app):
        self.app, self.env = app, app.env
        self.bib = _bib_authors(app)
        self.unresolved = []

    def _number(self, docname, ids, kinds=None):
        numbers = getattr(self.env, "toc_fignumbers", {}).get(docname, {})
        for kind, table in numbers.items():
            if kinds and kind not in kinds:
                continue
            for node_id in ids:
                if node_id in table:
                    return kind, ".".join(map(str, table[node_id]))
        return None, None

    def cite(self, role, keys):
        found = [self.bib.get(k.strip()) for k in keys.split(",")]
        if not all(found):
            return None
        if role.startswith("cite:t"):
            return "; ".join(f"{names} ({year})" for names, year in found)
        return "(" + "; ".join(f"{names} {year}" for names, year in found) + ")"

    def ref(self, role, target):
        text = None
        if m := re.fullmatch(r"(.*?)\s*<([^<>]+)>", target, flags=re.S):
            text, target = m.group(1).strip(), m.group(2).strip()
        proofs = getattr(self.env, "proof_list", {}) or {}
        std = self.env.domaindata.get("std", {})
        labels, anon = std.get("labels", {}), std.get("anonlabels", {})
        exercises = getattr(self.env, "sphinx_exercise_registry", {}) or {}
        number = None
        if role == "eq":
            eqs = self.env.domaindata.get("math", {}).get("objects", {})
            if target in eqs:
                docname, eqno = eqs[target]
                _, number = self._number(docname, [f"equation-{target}"], {"displaymath"})
                return (self.app.config.math_eqref_format or "({number})").format(number=number or eqno)
            return None
        if target in proofs:
            match = proofs[target]
            if not match.get("nonumber"):
                _, number = self._number(match["docname"], [target], {match.get("countertype")})
            default = f"{match['realtype'].title()} {number or ''}".strip()
        elif target in exercises:
            entry = exercises[target]
            _, number = self._number(entry["docname"], [target], {entry.get("type", "exercise")})
            default = f"{entry.get('type', 'exercise').title()} {number or ''}".strip()
        elif target in labels or target in anon:
            docname, labelid = (labels.get(target) or anon.get(target))[:2]
            sectname = labels[target][2] if target in labels else ""
            kind, number = self._number(docname, [labelid])
            if role == "numref" and number:
                fmt = (self.app.config.numfig_format or {}).get(kind, kind.title() + " %s")
                default = fmt % number
            else:
                default = sectname or (f"{kind.title()} {number}" if number else None)
        else:
            return text
        if text and number:
            return text.replace("{number}", number).replace("%s", number)
        return text or default

    def __call__(self, match, where):
        role, target = match.group(1), match.group(2)
        out = self.cite(role, target) if role.startswith("cite") else self.ref(role, target)
        if out is None:
            self.unresolved.append(f"{where}: {match.group(0)}")
            return target
        return out


def lite_markdown(source: str, resolve, where: str = "") -> str:
    """A markdown cell as the lite lab should read it: roles as the book's text, solutions marked."""
    source = LITE_ROLE.sub(lambda m: resolve(m, where), source)
    source = LITE_SOLUTION_START.sub("**Solution** (this cell and the ones below, to the end of the solution)", source)
    return LITE_SOLUTION_END.sub("*End of the solution.*", source)


def _lite_contents(app, dest: Path) -> int:
    """Copy every notebook of the book into ``dest``, each opened by a cell installing dpbook.

    The copies' markdown gets, instead of the roles jupyterlab-myst cannot resolve in a lone
    notebook (citations, cross-references to other chapters), the text the book shows for them;
    a role that cannot be resolved fails the build.
    """
    import nbformat

    from dpbook_book.exercises import solution_events

    resolve = LiteText(app)
    n = 0
    for docname in sorted(app.env.found_docs):
        src = Path(app.env.doc2path(docname))
        if src.suffix != ".ipynb":
            continue
        rel = src.relative_to(app.srcdir)
        nb = nbformat.read(src, as_version=4)
        for k, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                # the solutions' boundaries become words for the reader; the checker reads them here
                events = solution_events(cell.source)
                if events:
                    cell.metadata.setdefault("dpbook", {})["solutions"] = events
                cell.source = lite_markdown(cell.source, resolve, f"{rel.as_posix()} cell {k}")
        nb.cells.insert(0, nbformat.v4.new_code_cell(LITE_INSTALL_CELL))
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out)
        n += 1
    for item in resolve.unresolved:
        logger.warning(f"a role the lite notebook shows as its bare target (unknown target or citation key): {item}",
                       type="dpbook", subtype="lite")
    return n


def build_wheel(repo: Path, src: Path, dest: Path, packages=WHEEL_PACKAGES) -> Path:
    """Build dpbook's pure-Python wheel from a clean copy of its packages (the tree stays untouched).

    The wheel must hold every module of each of ``packages`` (the library ``dpbook`` and the book's
    support package ``dpbook_book``), else the build fails naming the missing modules.
    """
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (repo / name).is_file():
            shutil.copy2(repo / name, src / name)
    for package in packages:
        if not (repo / package / "__init__.py").is_file():
            raise ExtensionError(f"dpbook_site: the wheel needs the package {package!r}, but {repo / package} "
                                 "is not a Python package")
        shutil.copytree(repo / package, src / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
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
    expected = {p.relative_to(repo).as_posix() for package in packages for p in (repo / package).rglob("*.py")}
    if missing := sorted(expected - names):
        raise ExtensionError(
            f"dpbook_site: the dpbook wheel lacks {missing}; list every package in pyproject.toml "
            f"([tool.setuptools.packages.find] include = {[f'{p}*' for p in packages]})"
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
    # render every cell of a chapter, not only those scrolled into view (JupyterLab's windowing)
    (work / "lite-dir" / "overrides.json").write_text(json.dumps({
        "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
    }))
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


#: alt texts that say nothing about an image
_GENERIC_ALT = {"", "image", "img", "figure", "fig", "output", "plot", "chart", "graph", "picture", "png",
                "svg", "jpg", "jpeg", "gif", "untitled", "none", "alt", "todo"}


def meaningless_alt(alt, uri: str = "") -> str | None:
    """Why ``alt`` says nothing about the image at ``uri`` (``None`` when it is a real description)."""
    text = " ".join(str(alt or "").split())
    if text.lower().rstrip(".") in _GENERIC_ALT:
        return "no alt text" if not text else f"a generic alt text {text!r}"
    name = uri.rsplit("/", 1)[-1]
    if uri and text in (uri, name):
        return f"its file name {text!r} as alt text"
    if re.fullmatch(r"[\w./\\-]*\.(png|jpe?g|svg|gif|webp|pdf)", text, flags=re.I):
        return f"a file name {text!r} as alt text"
    if re.fullmatch(r"[0-9a-f]{8,}", text, flags=re.I):
        return f"a hash {text!r} as alt text"
    if re.fullmatch(r"<(Figure|matplotlib|IPython)[^>]*>", text):
        return f"a Python repr {text!r} as alt text"
    return None


def caption_alt(caption) -> str:
    """The plain text of a figure caption, as alt text: math is kept as its TeX source (no ``$``)."""
    return " ".join(caption.astext().split())


def _cell_of(node):
    """The notebook code-cell container (myst-nb) holding ``node``, or ``None``."""
    while node is not None:
        if getattr(node, "tagname", "") == "container" and node.get("nb_element") == "cell_code":
            return node
        node = node.parent
    return None


def on_doctree_resolved(app, doctree, docname):
    """Give every captioned image its caption as alt text; warn about notebook images without one.

    An image in a figure with a caption (a ``{figure}`` or a cell's ``mystnb: figure: caption:``)
    and no alt of its own gets the caption's plain text.  A notebook output image that is still
    left without a meaningful alt (docutils would fall back to its hashed file name) is reported
    with its notebook and cell: under ``-W`` (the strict build) that fails the build.
    """
    from docutils import nodes

    for figure in doctree.findall(nodes.figure):
        captions = [c for c in figure.children if isinstance(c, nodes.caption)]
        if not captions:
            continue
        text = caption_alt(captions[0])
        for image in figure.findall(nodes.image):
            if text and meaningless_alt(image.get("alt"), image.get("uri", "")):
                image["alt"] = text
    source = app.env.doc2path(docname)
    for image in doctree.findall(nodes.image):
        cell = _cell_of(image)
        if cell is None:
            continue
        why = meaningless_alt(image.get("alt"), image.get("uri", ""))
        if why is None:
            continue
        try:
            rel = Path(source).relative_to(app.srcdir).as_posix()
        except ValueError:
            rel = str(source)
        first = ""
        for block in cell.findall(nodes.literal_block):
            first = block.astext().strip().splitlines()[0][:70] if block.astext().strip() else ""
            break
        logger.warning(
            f"notebook output image with {why}: {rel}, cell {cell['cell_index']} (0-based index in "
            f"the notebook's cells; its code starts {first!r}). Say what the image shows in the cell's "
            "metadata: {\"mystnb\": {\"image\": {\"alt\": \"...\"}}} (or give it a caption: "
            "{\"mystnb\": {\"figure\": {\"caption\": \"...\"}}})",
            location=image, type="dpbook", subtype="alt",
        )


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
    paths = sorted(p for package in packages for p in (root / package).rglob("*.py")
                   if "__pycache__" not in p.parts)
    paths += [root / f for f in files if (root / f).is_file()]
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def on_config_inited(app, config):
    """Key the execution cache on the library: ``<build dir>/.jupyter_cache/<library_hash>``.

    Runs before myst-nb reads ``nb_execution_cache_path`` (on ``builder-inited``); every builder of
    one ``--path-output`` (html, then pdflatex) shares the folder, so the PDF build reuses the
    outputs of the HTML build instead of executing the notebooks again.  An explicit
    ``execute: cache:`` path in ``_config.yml`` is kept as the parent folder.
    """
    base = config.nb_execution_cache_path or Path(app.outdir).resolve().parent / ".jupyter_cache"
    path = Path(base) / library_hash(app.confdir)
    config.nb_execution_cache_path = str(path)
    logger.info(f"[dpbook_site] notebook execution cache keyed on the library: {path}")


def on_latex_builder_inited(app):
    """Number the print edition's boxes as the site does: ``Theorem 2.1``, not ``Theorem 2.3.1``.

    sphinx-jupyterbook-latex sets ``numfig_secnum_depth = 2`` for a book with parts (it counts the
    part as a level), which is right for what LaTeX numbers itself (figures and equations, reset at
    each chapter) but makes the numbers Sphinx assigns — the theorem-like and exercise boxes and
    their references, from ``env.toc_fignumbers`` — chapter.section.n.  They are assigned at depth 1
    (as for the HTML), and the writer gets depth 2 back afterwards (:func:`on_env_get_updated`).
    """
    if app.builder.format == "latex" and app.config.numfig_secnum_depth == 2:
        app.config.numfig_secnum_depth = 1
        app.env.dpbook_latex_secnum_depth = 2


def on_env_get_updated(app, env):
    """After Sphinx's toctree collector has numbered the boxes (``env-get-updated``, priority 500)."""
    depth = getattr(env, "dpbook_latex_secnum_depth", None)
    if depth is not None and app.builder.format == "latex":
        app.config.numfig_secnum_depth = depth
        del env.dpbook_latex_secnum_depth
    return []


def _print_solution_titles():
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class PrintSolutionTitles(SphinxPostTransform):
        """In the print edition, title each solution "Solution to Exercise N.M" (the page's says "Solution").

        On the page a solution is a collapsed dropdown right under its exercise; in print it is a box
        after it, so it names the exercise it solves, with the exercise's number.
        """

        default_priority = 25  # after sphinx-exercise's ResolveTitlesInSolutions (21)
        formats = ("latex",)

        def run(self):
            from docutils import nodes
            from sphinx_exercise.nodes import solution_node

            registry = getattr(self.env, "sphinx_exercise_registry", {}) or {}
            for node in self.document.findall(solution_node):
                entry = registry.get(node.get("target_label"))
                if not entry or not node.children or not isinstance(node.children[0], nodes.title):
                    continue
                exercise = entry["node"]
                ids = exercise.get("ids") or [""]
                number = self.env.toc_fignumbers.get(entry["docname"], {}).get("exercise", {}).get(ids[0])
                if not number:
                    continue
                title = node.children[0]
                title.children = []
                title += nodes.Text(f"Solution to Exercise {'.'.join(map(str, number))}")

    return PrintSolutionTitles


def _print_proofs():
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class PrintProofs(SphinxPostTransform):
        """In the print edition, a proof is plain text ("Proof. ..."), not a box with an empty title bar.

        sphinx-proof writes a proof as an admonition without a title, which LaTeX's admonition
        environment would show as an empty coloured title above the box.
        """

        default_priority = 25
        formats = ("latex",)

        def run(self):
            from docutils import nodes

            for node in list(self.document.findall(nodes.admonition)):
                if "proof" in node["classes"] and not any(isinstance(c, nodes.title) for c in node.children):
                    node.replace_self(nodes.container("", *node.children, classes=["proof"]))

    return PrintProofs


def _print_part_titles():
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class PrintPartTitles(SphinxPostTransform):
        """In the print edition, a part's title drops its "Part I: " (LaTeX prints "Part I" above it).

        sphinx-jupyterbook-latex makes each captioned toctree of ``_toc.yml`` a LaTeX ``\\part`` titled
        by the caption, which on the site must say which part it is.
        """

        default_priority = 710  # after sphinx-jupyterbook-latex made the parts (700)
        formats = ("latex",)

        def run(self):
            from docutils import nodes
            from sphinx import addnodes

            for start in self.document.findall(addnodes.start_of_file):
                section = start.children[0] if start.children else None
                if not isinstance(section, nodes.section) or section.get("docname") != start.get("docname"):
                    continue
                title = section.children[0] if section.children else None
                if isinstance(title, nodes.title):
                    text = title.astext()
                    short = re.sub(r"^Part [IVXLC]+:\s*", "", text)
                    if short and short != text:
                        title.children = []
                        title += nodes.Text(short)

    return PrintPartTitles


def _print_bibliography():
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class PrintBibliographyInPlace(SphinxPostTransform):
        """In the print edition, the bibliography is the References chapter (where the site has it).

        Sphinx's LaTeX writer gathers every citation into a "Bibliography" chapter at the very end
        (its ``BibliographyTransform``), which would leave the References chapter empty.  The gathered
        list goes back into the chapter holding the ``{bibliography}`` directive (the preamble in
        ``_config.yml`` makes it start no chapter of its own).
        """

        default_priority = 760  # after Sphinx's BibliographyTransform (750)
        formats = ("latex",)

        def run(self):
            from docutils import nodes
            from sphinx import addnodes
            from sphinx.builders.latex.nodes import thebibliography

            bibs = list(self.document.findall(thebibliography))
            try:
                docnames = {key.docname for key in self.env.get_domain("cite").bibliographies}
            except Exception:  # another sphinxcontrib-bibtex: leave Sphinx's layout
                return
            if len(bibs) != 1 or len(docnames) != 1:
                return
            docname = docnames.pop()
            title = self.env.titles[docname].astext().lower()
            for start in self.document.findall(addnodes.start_of_file):
                if start.get("docname") != docname:
                    continue
                for section in start.findall(nodes.section):
                    # the chapter's own section (the next chapters may be nested in it): right under its title
                    if title in section["names"] and isinstance(section.children[0], nodes.title):
                        bibs[0].parent.remove(bibs[0])
                        section.insert(1, bibs[0])
                        return

    return PrintBibliographyInPlace


def setup(app):
    app.add_config_value("dpbook_offline_packages", None, "html")
    app.add_config_value("dpbook_lite", True, "html")
    encrypt_kernel_transport()
    app.connect("config-inited", on_config_inited)
    app.connect("builder-inited", on_builder_inited)
    app.connect("builder-inited", on_latex_builder_inited, priority=900)
    app.connect("env-get-updated", on_env_get_updated, priority=900)
    app.add_post_transform(_print_solution_titles())
    app.add_post_transform(_print_proofs())
    app.add_post_transform(_print_part_titles())
    app.add_post_transform(_print_bibliography())
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("html-page-context", on_page_context, priority=600)
    app.connect("build-finished", on_build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
