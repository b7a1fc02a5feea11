"""A citable, licensed, versioned edition (issue 21): licences, CITATION.cff, the changelog, the one
version, the errata page, the edition on the site and in the PDF, and the CI workflow (linted: it
cannot run here)."""

import ast
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

import dpbook

ROOT = Path(__file__).resolve().parents[1]
VERSION = ast.literal_eval(
    (ROOT / "dpbook" / "_version.py")
    .read_text()
    .split("__version__ =")[1]
    .splitlines()[0]
)
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def _check_jsonschema(schema, *files):
    """check-jsonschema with one of its built-in (vendored, offline) schemas: (ok, output)."""
    exe = shutil.which(
        "check-jsonschema", path=str(Path(sys.executable).parent)
    ) or shutil.which("check-jsonschema")
    assert exe, "check-jsonschema is pinned in requirements.txt"
    res = subprocess.run(
        [exe, "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
    )
    return res.returncode == 0, res.stdout + res.stderr


# --- licences -----------------------------------------------------------------------------------------------


def test_licences_are_the_real_texts():
    code = (ROOT / "LICENSE").read_text()
    assert (
        code.startswith("BSD 3-Clause License")
        and "Neither the name of the copyright holder" in code
    )
    text = (ROOT / "LICENSE-TEXT").read_text()
    assert text.startswith("Attribution 4.0 International")
    assert (
        "Section 1 -- Definitions." in text and "Section 8 -- Interpretation." in text
    )


def test_the_split_is_stated_where_readers_meet_it():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert (
        'license = "BSD-3-Clause"' in pyproject
        and 'license-files = ["LICENSE"]' in pyproject
    )
    for page in ("README.md", "book/intro.md"):
        text = (ROOT / page).read_text()
        assert "CC BY 4.0" in text and "BSD 3-Clause" in text, page


# --- the version: one home -----------------------------------------------------------------------------------


def test_the_version_has_one_home():
    assert dpbook.__version__ == VERSION and "__version__" not in dpbook.__all__
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    assert 'dynamic = ["version"]' in (ROOT / "pyproject.toml").read_text()
    assert (
        'attr = "dpbook._version.__version__"' in (ROOT / "pyproject.toml").read_text()
    )
    # no other file spells a version of its own
    for path in ("pyproject.toml", "dpbook/__init__.py", "_config.yml"):
        assert not re.search(r"""version\s*=\s*["']\d""", (ROOT / path).read_text()), (
            path
        )


# --- CITATION.cff ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_citation_cff_is_valid_and_current():
    ok, out = _check_jsonschema("vendor.citation-file-format", ROOT / "CITATION.cff")
    assert ok, out
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["version"] == VERSION and cff["preferred-citation"]["edition"] == VERSION
    assert set(cff["license"]) == {"BSD-3-Clause", "CC-BY-4.0"}


@pytest.mark.slow
def test_the_citation_check_rejects_a_broken_file(tmp_path):
    broken = tmp_path / "CITATION.cff"
    text = (ROOT / "CITATION.cff").read_text()
    broken.write_text(
        text.replace("cff-version: 1.2.0", "cff-version: 1.2.0\nlicence: CC-BY-4.0", 1)
    )
    assert not _check_jsonschema("vendor.citation-file-format", broken)[
        0
    ]  # an unknown key
    broken.write_text(
        re.sub(r"(?m)^authors:\n  - name: The dpbook authors\n", "", text, count=1)
    )
    assert not _check_jsonschema("vendor.citation-file-format", broken)[0]  # no authors


# --- changelog and errata -------------------------------------------------------------------------------------


def test_changelog_starts_with_this_edition():
    log = (ROOT / "CHANGELOG.md").read_text()
    sections = re.findall(r"(?m)^## \[(\d+\.\d+\.\d+)\]", log)
    assert sections and sections[0] == VERSION
    for part in ("Part I,", "Part II,", "Part III,", "Part IV,", "Part V,"):
        assert part in log


def test_errata_page_is_in_the_back_matter():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    back = next(p for p in toc["parts"] if p["caption"] == "Back matter")
    assert {"file": "book/errata"} in back["chapters"]
    assert f"## Edition {VERSION}" in (ROOT / "book" / "errata.md").read_text()
    intro = (ROOT / "book" / "intro.md").read_text()
    assert (
        "## How to cite" in intro
        and "{{ version }}" in intro
        and "{doc}`errata`" in intro
    )


# --- the edition on the site and in the PDF (the book's extension, on a one-page Sphinx project) ------------


def test_the_edition_reaches_the_footer_and_the_pdf_front_matter(tmp_path):
    pytest.importorskip("sphinx")
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "_ext")!r})
        extensions = ["myst_parser", "dpbook_edition"]
        myst_enable_extensions = ["substitution"]
        project = "dpbook"
        html_theme = "sphinx_book_theme"
        latex_documents = [("index", "book.tex", "A book", "The dpbook authors", "manual")]
    """)
    )
    (src / "index.md").write_text("# A book\n\nThis is edition {{ version }}.\n")
    for builder in ("html", "latex"):
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "sphinx",
                "-q",
                "-b",
                builder,
                str(src),
                str(tmp_path / builder),
            ],
            capture_output=True,
            text=True,
        )
        assert res.returncode == 0, res.stderr
    html = (tmp_path / "html" / "index.html").read_text()
    assert f"This is edition {VERSION}." in html
    assert (
        f"Edition {VERSION}. Text and figures:" in html
        and "CC BY 4.0" in html
        and "BSD-3-Clause" in html
    )
    tex = (tmp_path / "latex" / "book.tex").read_text()
    assert (
        rf"\release{{{VERSION}}}" in tex
        and r"\renewcommand{\releasename}{Edition}" in tex
    )
    assert "Creative Commons Attribution\n4.0 International licence (CC BY 4.0" in tex
    assert f"edition {VERSION}" in tex


# --- the CI workflow, linted -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_workflow_is_valid():
    ok, out = _check_jsonschema("vendor.github-workflows", WORKFLOW)
    assert ok, out


@pytest.mark.slow
def test_workflow_lint_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "book.yml"
    broken.write_text(
        WORKFLOW.read_text().replace(
            "    runs-on: ubuntu-24.04\n", "    runs_on: ubuntu-24.04\n", 1
        )
    )
    assert not _check_jsonschema("vendor.github-workflows", broken)[0]


def test_workflow_builds_strictly_deploys_main_and_releases_tags():
    flow = yaml.safe_load(WORKFLOW.read_text())
    on = flow.get("on", flow.get(True))  # YAML 1.1 reads the key `on` as True
    assert on["push"]["branches"] == ["main"] and on["push"]["tags"] == ["v*"]
    jobs = flow["jobs"]
    build = "\n".join(s.get("run", "") for s in jobs["build"]["steps"])
    assert "bash .ci/run" in build
    ci = (ROOT / ".ci" / "run").read_text()
    assert (
        "jupyter-book build . -W -n --keep-going" in ci
        and "tools/print_edition.py" in ci
    )
    assert "tests/test_site.py" in ci and "python -m pytest" in ci
    upload = next(
        s
        for s in jobs["build"]["steps"]
        if s.get("uses", "").startswith("actions/upload-pages-artifact")
    )
    assert upload["with"]["path"] == "_build/html"
    assert "dpbook.pdf" in (ROOT / "tools" / "print_edition.py").read_text()
    deploy = jobs["deploy"]
    assert (
        deploy["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    )
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any(
        s.get("uses", "").startswith("actions/deploy-pages") for s in deploy["steps"]
    )
    release = jobs["release"]
    assert "startsWith(github.ref, 'refs/tags/v')" in release["if"] and release[
        "permissions"
    ] == {"contents": "write"}
    steps = "\n".join(s.get("run", "") for s in release["steps"])
    assert "python -m build" in steps and "twine check --strict" in steps
    assert (
        "dist/*.whl dist/*.tar.gz" in steps
        and '"v$version" = "$GITHUB_REF_NAME"' in steps
    )


def _tex_in_bibliography(text):
    """``(line number, line)`` of every line of a .bib text with TeX math: the site's references page
    prints it as written, so ``$\\ell_1$`` shows raw (accents such as ``{\\"o}`` are rendered)."""
    return [
        (k, line.strip()) for k, line in enumerate(text.splitlines(), 1) if "$" in line
    ]


def test_the_bibliography_holds_no_tex_the_site_would_print_raw():
    text = (ROOT / "references.bib").read_text(encoding="utf-8")
    assert not _tex_in_bibliography(text)
    # the check sees what once reached the references page
    assert _tex_in_bibliography("  title = {Projections onto the $\\ell_1$-Ball},") == [
        (1, "title = {Projections onto the $\\ell_1$-Ball},")
    ]
