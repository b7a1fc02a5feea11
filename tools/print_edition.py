"""Build the print edition (one PDF of the whole book) and put it into the site as ``dpbook.pdf``.

Runs exactly the command a reader types, ``jupyter-book build . --builder pdflatex`` (XeLaTeX, see
``latex:`` in ``_config.yml``), into the same ``--path-output`` as the HTML build: the chapters'
outputs then come from the execution cache the HTML build filled (``execute_notebooks: cache``), so
no notebook executes again.  Then it checks that the PDF was written by this run, copies it to
``<path-output>/_build/html/dpbook.pdf`` (the site's ``print-edition.html``, linked from the intro,
then links it) and prints its page count and
the build's seconds.

    python tools/print_edition.py [--path-output DIR] [--no-copy]

Exits non-zero when the build fails or writes no PDF.  ``tests/test_pdf.py`` then reads the PDF
(``DPBOOK_PDF=<path-output>/_build/latex/book.pdf``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the PDF's name in the LaTeX output (``latex_documents: targetname: book.tex`` in ``_config.yml``)
PDF_NAME = "book.pdf"
#: its name in the site (the intro page's link)
SITE_NAME = "dpbook.pdf"


def page_count(pdf: Path) -> int:
    """The number of pages of ``pdf`` (poppler's ``pdfinfo``)."""
    out = subprocess.run(
        ["pdfinfo", str(pdf)], capture_output=True, text=True, check=True
    ).stdout
    match = re.search(r"^Pages:\s+(\d+)", out, re.M)
    if match is None:
        raise RuntimeError(f"pdfinfo printed no page count for {pdf}:\n{out}")
    return int(match.group(1))


def build(path_output: Path | None, book: Path = ROOT) -> tuple[Path, float]:
    """Run the pdflatex build; return the PDF and the build's wall-clock seconds."""
    build_dir = (path_output or book) / "_build"
    pdf = build_dir / "latex" / PDF_NAME
    cmd = ["jupyter-book", "build", str(book), "--builder", "pdflatex"]
    if path_output is not None:
        cmd += ["--path-output", str(path_output)]
    print("$", " ".join(cmd), flush=True)
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=book)
    seconds = time.time() - t0
    if proc.returncode != 0:
        raise SystemExit(
            f"print edition: `{' '.join(cmd)}` failed (exit {proc.returncode})"
        )
    if not pdf.is_file() or pdf.stat().st_mtime < t0:
        raise SystemExit(
            f"print edition: the build wrote no new {pdf} (see the LaTeX log {pdf.with_suffix('.log')})"
        )
    return pdf, seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--path-output",
        type=Path,
        default=None,
        help="the --path-output of the HTML build (the PDF build reuses its execution cache)",
    )
    parser.add_argument(
        "--no-copy", action="store_true", help="do not copy the PDF into the HTML site"
    )
    args = parser.parse_args(argv)
    path_output = args.path_output.resolve() if args.path_output else None
    pdf, seconds = build(path_output)
    pages = page_count(pdf)
    print(
        f"print edition: {pdf} ({pages} pages, {pdf.stat().st_size / 1e6:.1f} MB) built in {seconds:.0f} s"
    )
    if not args.no_copy:
        site = (path_output or ROOT) / "_build" / "html"
        if not (site / "index.html").is_file():
            raise SystemExit(
                f"print edition: no HTML site at {site} to copy the PDF into (build the HTML first)"
            )
        shutil.copy2(pdf, site / SITE_NAME)
        # the site's print-edition page (the intro links it) now links the PDF: the same writer as the HTML build's
        sys.path.insert(0, str(ROOT / "_ext"))
        from dpbook_site.latex import SITE_PDF, write_print_page

        assert SITE_PDF == SITE_NAME
        write_print_page(site)
        print(
            f"print edition: copied to {site / SITE_NAME}, linked from {site / 'print-edition.html'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
