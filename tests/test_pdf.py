"""The print edition (``jupyter-book build . --builder pdflatex``, see ``tools/print_edition.py``), read as text.

The PDF is read with poppler's ``pdftotext -layout``.  It must hold every chapter's title (each
notebook's first ``# `` heading, in ``_toc.yml``'s order), every numbered theorem-like box and
exercise with the number the HTML gives it (``Theorem 2.1``, ``Exercise 6.3``; the list is derived
from the sources — each chapter's ``prf:*`` and ``exercise`` directives in order, counted per kind
and numbered by the chapter's place in ``_toc.yml``'s numbered parts — and, when the built site is
given, checked against the numbers the site shows), a "Solution to Exercise N.M" for every exercise,
the bibliography's first authors of every cited entry, and no unresolved reference (``??``, ``[?]``)
or raw MyST/LaTeX markup outside the book's code listings.

Which PDF: ``DPBOOK_PDF`` (a path), else ``_build/latex/book.pdf``.  The site (``DPBOOK_SITE_DIR``,
else ``_build/html``) must then hold ``dpbook.pdf``, linked from the intro page.  With no PDF the
tests skip, unless ``DPBOOK_PDF_TEST=required`` (CI), when they fail.

The checker functions are plain functions of text; the last tests run them on synthetic broken
text so every check is seen to fail.
"""

from __future__ import annotations

import html as html_lib
import json
import os
import re
import shutil
import subprocess
import unicodedata
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PDF = Path(
    os.environ.get("DPBOOK_PDF", ROOT / "_build" / "latex" / "book.pdf")
).resolve()
SITE = Path(os.environ.get("DPBOOK_SITE_DIR", ROOT / "_build" / "html")).resolve()
REQUIRED = os.environ.get("DPBOOK_PDF_TEST", "").lower() == "required"
SITE_PDF = "dpbook.pdf"

#: prf directives that carry no number (sphinx-proof's proof box)
UNNUMBERED = {"proof"}
DIRECTIVE = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{(?P<kind>prf:\w+|exercise)\}[^\n]*\n(?P<opts>(?::[\w-]+:[^\n]*\n)*)",
    re.M,
)
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")

#: raw markup that must not survive into the PDF's text: (what it is, pattern)
MARKUP = [
    ("an unresolved reference ??", r"\?\?"),
    ("an unresolved citation [?]", r"\[\?\]"),
    (
        "a MyST role",
        r"\{(?:prf:ref|cite(?::[a-z]+)?|ref|numref|eq|doc|math|term|download|exercise|solution|"
        r"glue(?::[a-z]+)?|sub|sup|abbr|index)\}",
    ),
    (
        "a MyST directive",
        r"\{(?:prf:\w+|exercise|solution-start|solution-end|solution|admonition|note|warning|"
        r"figure|math|bibliography|code-cell|nb-exec-table)\}",
    ),
    ("a directive fence", r"```|:::"),
    (
        "a directive option",
        r"(?<![\w:]):(?:label|class|name|nonumber|dropdown|caption|alt|tags):(?=\s|$)",
    ),
    ("a TeX environment", r"\\(?:begin|end)\{"),
    (
        "a TeX command",
        r"\\(?:frac|sqrt|mathbb|mathrm|mathcal|varepsilon|epsilon|le|leq|ge|geq|sum|int|left|right|"
        r"cdot|infty|operatorname|text|textbf|emph|label|ref|eqref|cite)(?![A-Za-z])",
    ),
    ("display-math dollars", r"\$\$"),
    ("inline-math dollars", r"(?<![\w$])\$(?=[\\A-Za-z{(])[^$\n]{1,80}\$(?![\w$])"),
]
_MARKUP_RE = [(what, re.compile(rx)) for what, rx in MARKUP]


# --------------------------------------------------------------------------- what the book holds


def _toc():
    import yaml

    return yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))


def _source(file: str) -> Path:
    for suffix in (".ipynb", ".md"):
        path = ROOT / (file + suffix)
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"_toc.yml names {file!r}, which is neither a notebook nor a markdown file"
    )


def _markdown(path: Path) -> str:
    """The markdown of a chapter (a notebook's markdown cells, or a ``.md`` file)."""
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "\n\n".join(
        "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"
    )


def _code(path: Path) -> str:
    if path.suffix != ".ipynb":
        return ""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join(
        "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"
    )


def chapters():
    """``[(number or None, source path)]`` of every chapter in ``_toc.yml``'s order.

    Chapters of a ``numbered`` part are numbered on from the previous numbered chapter (as the
    HTML numbers them: Part II starts at 6); back matter gets ``None``.
    """
    out, n = [], 0
    for part in _toc().get("parts", []):
        for chapter in part.get("chapters", []):
            number = None
            if part.get("numbered"):
                n += 1
                number = n
            out.append((number, _source(chapter["file"])))
    return out


def title(path: Path) -> str:
    """The chapter's title: its first ``# `` heading, as plain text."""
    for line in _markdown(path).splitlines():
        if line.startswith("# "):
            return plain(line[2:])
    raise AssertionError(f"{path} has no '# ' heading")


def plain(text: str) -> str:
    """MyST inline text as a reader sees it (code ticks and emphasis dropped)."""
    text = re.sub(r"\{[\w:-]+\}`([^`]*)`", r"\1", text)
    return re.sub(r"[`*_]", "", text).strip()


def numbered_labels(number: int, markdown: str) -> list[str]:
    """``["Definition 2.1", "Theorem 2.1", "Exercise 2.1", ...]``: the numbered boxes of chapter ``number``.

    Each kind (theorem, lemma, ..., exercise) is counted on its own, in the order of the
    directives, as sphinx-proof and sphinx-exercise number them; ``:nonumber:`` boxes and proofs
    carry no number.
    """
    counts, out = {}, []
    for m in DIRECTIVE.finditer(markdown):
        kind = m.group("kind").removeprefix("prf:")
        if kind in UNNUMBERED or re.search(r"^:nonumber:", m.group("opts"), re.M):
            continue
        counts[kind] = counts.get(kind, 0) + 1
        out.append(f"{kind.title()} {number}.{counts[kind]}")
    return out


def book_labels() -> list[str]:
    out = []
    for number, path in chapters():
        if number is not None:
            out += numbered_labels(number, _markdown(path))
    return out


def site_labels(site: Path) -> list[str]:
    """The numbered box labels the built site shows (its admonition titles' caption numbers)."""
    out = []
    for number, path in chapters():
        if number is None:
            continue
        page = site / path.relative_to(ROOT).with_suffix(".html")
        text = page.read_text(encoding="utf-8")
        for label in re.findall(
            r'<p class="admonition-title"[^>]*>\s*<span class="caption-number">([^<]+)</span>',
            text,
        ):
            out.append(" ".join(html_lib.unescape(label).split()))
    return out


def cited_first_authors() -> dict:
    """``{bib key: first author's last name}`` of every entry the book cites (the bibliography lists those)."""
    from pybtex.database import parse_file
    from pybtex.richtext import Text

    keys = set()
    for _, path in chapters():
        keys.update(
            k.strip()
            for m in CITE.finditer(_markdown(path))
            for k in m.group(1).split(",")
        )
    bib = parse_file(ROOT / "references.bib")
    out = {}
    for key in sorted(keys):
        entry = bib.entries[key]
        people = entry.persons.get("author") or entry.persons.get("editor")
        name = " ".join(people[0].prelast_names + people[0].last_names)
        out[key] = Text.from_latex(name).render_as("text")
    return out


# --------------------------------------------------------------------------- the checkers (plain text in)


def normalize(text: str) -> str:
    """PDF text for searching: ligatures expanded (NFKC), words broken at a line end joined, one space."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"(\w)-\n\s*(\w)", r"\1\2", text)
    return " ".join(text.split())


def missing(text: str, needles) -> list[str]:
    """The ``needles`` not in ``text`` (both whitespace-normalized; a needle's number must end there)."""
    flat = normalize(text)
    out = []
    for needle in needles:
        pattern = re.escape(normalize(needle)).replace(r"\ ", r"\s*")
        if not re.search(pattern + r"(?![\d.]\d)", flat):
            out.append(needle)
    return out


def code_lines(paths) -> set:
    """Every whitespace-normalized line of the chapters' code cells (listings may show raw TeX, e.g. labels)."""
    out = set()
    for path in paths:
        for line in _code(path).splitlines():
            flat = " ".join(line.split())
            if flat:
                out.add(flat)
    return out


def markup_problems(text: str, code=frozenset()) -> list[str]:
    """Raw markup left in ``text``: ``["<what>: <the line>"]``; lines of the book's code (``code``) are allowed."""
    out = []
    for raw in text.splitlines():
        line = " ".join(raw.split())
        for what, rx in _MARKUP_RE:
            if rx.search(line):
                if any(
                    line in c or c in line for c in code if len(c) >= 12
                ) and what not in (
                    "an unresolved reference ??",
                    "an unresolved citation [?]",
                ):
                    continue
                out.append(f"{what}: {line[:160]}")
    return out


# --------------------------------------------------------------------------- the PDF


def _unavailable(reason):
    if REQUIRED:
        pytest.fail(f"{reason} (DPBOOK_PDF_TEST=required)")
    pytest.skip(reason)


@lru_cache(maxsize=None)
def _pdf_text(pdf: Path) -> str:
    proc = subprocess.run(
        ["pdftotext", "-layout", "-enc", "UTF-8", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


@pytest.fixture(scope="module")
def text():
    if not PDF.is_file():
        _unavailable(
            f"no print edition at {PDF}: run `python tools/print_edition.py` (or set DPBOOK_PDF)"
        )
    if shutil.which("pdftotext") is None:
        _unavailable("pdftotext (poppler-utils) is not installed")
    return _pdf_text(PDF)


def test_every_chapter_title(text):
    titles = [title(path) for _, path in chapters()]
    assert len(titles) >= 20
    assert not missing(text, titles), (
        f"chapter titles not in the PDF: {missing(text, titles)}"
    )


def test_every_numbered_box_and_exercise(text):
    labels = book_labels()
    assert any(label.startswith("Theorem ") for label in labels) and any(
        label.startswith("Exercise ") for label in labels
    )
    assert not missing(text, labels), (
        f"numbered boxes not in the PDF: {missing(text, labels)}"
    )


def test_every_exercise_has_its_solution(text):
    solutions = [
        f"Solution to {label}"
        for label in book_labels()
        if label.startswith("Exercise ")
    ]
    assert not missing(text, solutions), (
        f"solutions not in the PDF: {missing(text, solutions)}"
    )


def test_the_numbers_are_those_of_the_site():
    """The source-derived labels are exactly the site's, so the PDF is checked against what the HTML shows."""
    if not (SITE / "index.html").is_file():
        pytest.skip(f"no built site at {SITE}")
    assert site_labels(SITE) == book_labels()


def test_bibliography(text):
    authors = cited_first_authors()
    assert len(authors) >= 5
    assert "References" in text
    assert not missing(text, authors.values()), (
        f"cited authors not in the PDF: {missing(text, authors.values())}"
    )


def test_no_unresolved_reference_or_raw_markup(text):
    problems = markup_problems(text, code_lines(path for _, path in chapters()))
    assert not problems, (
        f"{len(problems)} lines of the PDF hold raw markup:\n"
        + "\n".join(problems[:40])
    )


def test_site_offers_the_pdf():
    """The site offers the PDF its print-edition page links (the intro links that page; see test_site.py)."""
    if not (SITE / "index.html").is_file():
        _unavailable(f"no built site at {SITE}")
    pdf = SITE / SITE_PDF
    if not pdf.is_file():
        # the README's build alone makes no PDF; its print-edition page says so (tests/test_site.py)
        _unavailable(
            f"the site has no {SITE_PDF}: run `python tools/print_edition.py` after the HTML build"
        )
    assert pdf.read_bytes()[:5] == b"%PDF-", f"{pdf} is not a PDF"
    page = SITE / "print-edition.html"
    hrefs = (
        re.findall(r'href="([^"#?]+\.pdf)"', page.read_text(encoding="utf-8"))
        if page.is_file()
        else []
    )
    targets = {(page.parent / h).resolve() for h in hrefs}
    assert pdf.resolve() in targets, (
        f"the print-edition page links {hrefs}, not {SITE_PDF}"
    )


# --------------------------------------------------------------------------- the checkers flag broken text


GOOD = """\
                         Contents
1  Differential privacy and the Laplace mechanism                     3
   Theorem 1.1 (Laplace)   Definition 1.2    Exercise 1.1
   Solution to Exercise 1.1       Bounded statistics: truncation
and BIT
   Dwork, C. and Roth, A. (2014). The algorithmic foundations ...
"""


def test_checkers_pass_good_text():
    assert (
        missing(
            GOOD,
            [
                "Differential privacy and the Laplace mechanism",
                "Theorem 1.1",
                "Definition 1.2",
                "Solution to Exercise 1.1",
                "Bounded statistics: truncation and BIT",
                "Dwork",
            ],
        )
        == []
    )
    assert markup_problems(GOOD) == []


@pytest.mark.parametrize(
    "needle",
    [
        "Theorem 1.2",
        "Theorem 1.10",
        "Theorem 11.1",
        "Exercise 1.2",
        "Accuracy: MSE",
        "Solution to Exercise 1.2",
        "Higham",
    ],
)
def test_missing_flags_what_is_not_there(needle):
    assert missing(GOOD, [needle]) == [needle]


@pytest.mark.parametrize(
    "broken",
    [
        "see Theorem ?? for the bound",
        "as shown by [?], the mean",
        "by {prf:ref}`thm-laplace`",
        "following {cite:p}`liu2019`",
        ":label: thm-laplace",
        r"\begin{aligned} x &= 1 \end{aligned}",
        r"the mean \frac{1}{n} of the sample",
        "$$ x = 1 $$",
        "```{prf:theorem}",
        r"the bound $\varepsilon$ holds",
        "{math}`x`",
    ],
)
def test_markup_problems_flag_broken_text(broken):
    assert markup_problems(GOOD + broken + "\n"), broken


def test_code_listings_may_show_tex_but_never_a_question_mark_reference():
    code = {r'ax.set_xlabel(r"$\varepsilon$")', 'print("??")'}
    assert markup_problems(r'    ax.set_xlabel(r"$\varepsilon$")' + "\n", code) == []
    assert markup_problems('    print("??")\n', code)


def test_numbered_labels_count_each_kind_and_skip_unnumbered():
    md = (
        "```{prf:definition} A\n:label: d1\nx\n```\n\n```{prf:theorem}\n:label: t1\n```\n"
        "```{prf:proof}\n```\n:::{prf:theorem} B\n:label: t2\n:nonumber:\n:::\n"
        "```{prf:definition}\n```\n````{exercise}\n:label: e1\n````\n"
    )
    assert numbered_labels(4, md) == [
        "Definition 4.1",
        "Theorem 4.1",
        "Definition 4.2",
        "Exercise 4.1",
    ]


def test_execution_cache_is_keyed_on_the_library(tmp_path):
    """A changed module of either package, or requirements.txt, names another cache folder (the PDF reuses the
    HTML's)."""
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    import dpbook_site as site

    for package in site.LIBRARY_PACKAGES:
        (tmp_path / package / "sub").mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("x = 1\n")
        (tmp_path / package / "sub" / "m.py").write_text("y = 2\n")
    (tmp_path / "requirements.txt").write_text("numpy==2.4.6\n")
    first = site.library_hash(tmp_path)
    assert first == site.library_hash(tmp_path) and len(first) == 16
    (tmp_path / "notes.txt").write_text("not library code\n")
    assert site.library_hash(tmp_path) == first
    for path, change in [
        ("dpbook/sub/m.py", "y = 3\n"),
        ("dpbook_book/__init__.py", "x = 2\n"),
        ("requirements.txt", "numpy==2.4.7\n"),
        ("dpbook_book/new.py", ""),
    ]:
        before = site.library_hash(tmp_path)
        (tmp_path / path).write_text(change)
        assert site.library_hash(tmp_path) != before, path
    assert site.library_hash(ROOT) != first


def site_figures(site: Path) -> list[str]:
    """The numbered figures of the site's chapters (``Fig. 2.1``; the widget views' included)."""
    out = []
    for number, path in chapters():
        if number is None:
            continue
        text = (site / path.relative_to(ROOT).with_suffix(".html")).read_text(
            encoding="utf-8"
        )
        out += [
            " ".join(html_lib.unescape(f).split())
            for f in re.findall(
                r'<span class="caption-number">(Fig\. [\d.]+)\s*</span>', text
            )
        ]
    return out


def test_every_figure_of_the_site_is_captioned_in_the_pdf(text):
    """Each figure the site numbers is in the PDF with its caption ("Fig. 8.1: ..."; a reference has no colon)."""
    if not (SITE / "index.html").is_file():
        _unavailable(f"no built site at {SITE}")
    figures = site_figures(SITE)
    assert len(figures) >= 20
    captions = [f"{fig}:" for fig in figures]
    assert not missing(text, captions), (
        f"figure captions not in the PDF: {missing(text, captions)}"
    )
    assert len(re.findall(r"Fig\. \d+\.\d+:", text)) == len(figures), (
        "the PDF has captioned figures the site has not"
    )
