"""JupyterLite: the book's chapters, runnable in the browser, built into ``<outdir>/lite/``.

After the HTML is written, the ``dpbook`` package (with the book's ``dpbook_book``) is built into a
pure-Python wheel and a JupyterLite site is built with the chapters as contents and the wheel in
its piplite index, so ``%pip install dpbook`` works in the browser.  The copies' markdown gets the
book's text for the roles jupyterlab-myst cannot resolve in a lone notebook (citations,
cross-references to other chapters), and the solutions' boundaries as words for the reader (kept
as events in the cell's metadata, ``dpbook.solutions``, where the book's exercise checker reads
them).  Nothing here imports the book's packages: the wheel is built from their files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

LITE_DIR = "lite"
LITE_INSTALL_CELL = (
    "# JupyterLite only: install the book's library (served by this site) and its widget toolkit.\n"
    "%pip install -q dpbook ipywidgets"
)


#: the packages the dpbook wheel must hold (the library, and the book's support code)
WHEEL_PACKAGES = ("dpbook", "dpbook_book")

#: the roles jupyterlab-myst cannot resolve in a lone notebook (no bibliography, no other chapters):
#: the lite copies get the text the book shows for them instead
LITE_ROLE = re.compile(
    r"\{(cite:t|cite:p|cite:ps|cite:ts|cite|prf:ref|ref|numref|eq|doc)\}`([^`]*)`"
)
#: sphinx-exercise's gated solutions span several cells; jupyterlab-myst knows no such directive
LITE_SOLUTION_START = re.compile(
    r"^(`{3,}|:{3,})\{solution-start\}(?P<arg>[^\n]*)\n(?::[\w-]+:[^\n]*\n)*\1[ \t]*$",
    re.M,
)
LITE_SOLUTION_END = re.compile(
    r"^(`{3,}|:{3,})\{solution-end\}[^\n]*\n(?::[\w-]+:[^\n]*\n)*\1[ \t]*$", re.M
)


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
                _, number = self._number(
                    docname, [f"equation-{target}"], {"displaymath"}
                )
                return (self.app.config.math_eqref_format or "({number})").format(
                    number=number or eqno
                )
            return None
        if target in proofs:
            match = proofs[target]
            if not match.get("nonumber"):
                _, number = self._number(
                    match["docname"], [target], {match.get("countertype")}
                )
            default = f"{match['realtype'].title()} {number or ''}".strip()
        elif target in exercises:
            entry = exercises[target]
            _, number = self._number(
                entry["docname"], [target], {entry.get("type", "exercise")}
            )
            default = f"{entry.get('type', 'exercise').title()} {number or ''}".strip()
        elif target in labels or target in anon:
            docname, labelid = (labels.get(target) or anon.get(target))[:2]
            sectname = labels[target][2] if target in labels else ""
            kind, number = self._number(docname, [labelid])
            if role == "numref" and number:
                fmt = (self.app.config.numfig_format or {}).get(
                    kind, kind.title() + " %s"
                )
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
        out = (
            self.cite(role, target)
            if role.startswith("cite")
            else self.ref(role, target)
        )
        if out is None:
            self.unresolved.append(f"{where}: {match.group(0)}")
            return target
        return out


def lite_markdown(source: str, resolve, where: str = "") -> str:
    """A markdown cell as the lite lab should read it: roles as the book's text, solutions marked."""
    source = LITE_ROLE.sub(lambda m: resolve(m, where), source)
    source = LITE_SOLUTION_START.sub(
        "**Solution** (this cell and the ones below, to the end of the solution)",
        source,
    )
    return LITE_SOLUTION_END.sub("*End of the solution.*", source)


def solution_boundaries(source: str) -> list:
    """The solution boundaries :func:`lite_markdown` writes out as words, in order of appearance.

    ``["start", label]`` for a ``{solution-start} label`` fence, ``["end"]`` for a ``{solution-end}``
    one: the events the lite copy keeps in the cell's metadata (``dpbook.solutions``) so that the
    book's checker still finds each solution's code.
    """
    found = [
        (m.start(), ["start", m["arg"].split()[0]])
        for m in LITE_SOLUTION_START.finditer(source)
        if m["arg"].strip()
    ]
    found += [(m.start(), ["end"]) for m in LITE_SOLUTION_END.finditer(source)]
    return [event for _, event in sorted(found, key=lambda pair: pair[0])]


def _lite_contents(app, dest: Path) -> int:
    """Copy every notebook of the book into ``dest``, each opened by a cell installing dpbook.

    The copies' markdown gets, instead of the roles jupyterlab-myst cannot resolve in a lone
    notebook (citations, cross-references to other chapters), the text the book shows for them;
    a role that cannot be resolved fails the build.
    """
    import nbformat

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
                events = solution_boundaries(cell.source)
                if events:
                    cell.metadata.setdefault("dpbook", {})["solutions"] = events
                cell.source = lite_markdown(
                    cell.source, resolve, f"{rel.as_posix()} cell {k}"
                )
        nb.cells.insert(0, nbformat.v4.new_code_cell(LITE_INSTALL_CELL))
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out)
        n += 1
    for item in resolve.unresolved:
        logger.warning(
            f"a role the lite notebook shows as its bare target (unknown target or citation key): {item}",
            type="dpbook",
            subtype="lite",
        )
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
            raise ExtensionError(
                f"dpbook_site: the wheel needs the package {package!r}, but {repo / package} "
                "is not a Python package"
            )
        shutil.copytree(
            repo / package,
            src / package,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "-w",
            str(dest),
            str(src),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise ExtensionError(
            f"dpbook_site: building the dpbook wheel failed:\n{proc.stderr}"
        )
    built = sorted(dest.glob("dpbook-*-py3-none-any.whl"))
    if not built:
        raise ExtensionError(f"dpbook_site: no pure-Python dpbook wheel in {dest}")
    with zipfile.ZipFile(built[-1]) as whl:
        names = set(whl.namelist())
    expected = {
        p.relative_to(repo).as_posix()
        for package in packages
        for p in (repo / package).rglob("*.py")
    }
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
    (work / "lite-dir" / "overrides.json").write_text(
        json.dumps(
            {
                "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
            }
        )
    )
    (work / "lite-dir" / "jupyter-lite.json").write_text(
        json.dumps(
            {
                "jupyter-lite-schema-version": 0,
                "jupyter-config-data": {
                    "appName": "dpbook (JupyterLite)",
                    # window.jupyterapp: the site test opens chapter after chapter in one lab
                    "exposeAppInBrowser": "true",
                },
            }
        )
    )
    out = Path(app.outdir) / LITE_DIR
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lite",
        "build",
        "--lite-dir",
        str(work / "lite-dir"),
        "--contents",
        str(contents),
        "--output-dir",
        str(out),
        "--apps",
        "lab",
        "--apps",
        "notebooks",
    ]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ExtensionError(
            f"dpbook_site: `jupyter lite build` failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )
    shipped = sorted((out / "pypi").glob("dpbook-*.whl"))
    if not shipped:
        raise ExtensionError(
            f"dpbook_site: the lite site at {out} holds no dpbook wheel"
        )
    logger.info(
        f"[dpbook_site] JupyterLite site with {n_nb} notebooks and {shipped[0].name} "
        f"built in {time.perf_counter() - t0:.1f} s"
    )


def on_build_finished(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    if app.config.dpbook_lite and os.environ.get("DPBOOK_LITE", "1") != "0":
        build_lite(app)
