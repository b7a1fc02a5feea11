"""Sphinx extension: the edition (version) and the licences, on every page of the site and in the PDF.

The version has one home, ``dpbook/_version.py``; this reads it (as text: nothing here imports the
book's packages) when the configuration is read, and puts it

* in Sphinx's ``version`` and ``release`` (the PDF's title page prints "Edition 0.1.0" under the
  title: ``latex_elements["releasename"]``);
* in the MyST substitution ``{{ version }}`` (the introduction's "How to cite");
* in the footer of every HTML page, with the licences (``html_theme_options["extra_footer"]``);
* on the page after the PDF's title page, with the licences and the way to cite the book
  (``latex_elements["maketitle"]``).

Text and figures are CC BY 4.0 (``LICENSE-TEXT``), code BSD-3-Clause (``LICENSE``).
"""

from __future__ import annotations

import ast
from pathlib import Path

VERSION_FILE = Path(__file__).resolve().parents[1] / "dpbook" / "_version.py"

LICENCE_HTML = (
    'Edition {version}. Text and figures: <a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a>; '
    'code: <a href="https://opensource.org/license/bsd-3-clause">BSD-3-Clause</a>.'
)

FRONT_MATTER = r"""\sphinxmaketitle
\thispagestyle{empty}
\vspace*{\fill}
\noindent\textbf{Differential Privacy for Bounded and Nonnegative Statistics}, edition %(version)s.\par
\bigskip
\noindent\copyright\ 2026 The dpbook authors.\par
\medskip
\noindent The text and the figures of this book are licensed under the Creative Commons Attribution
4.0 International licence (CC BY 4.0, \url{https://creativecommons.org/licenses/by/4.0/}): you may
share and adapt them for any purpose, giving appropriate credit. The code, in the book and in its
library \texttt{dpbook}, is licensed under the BSD 3-Clause licence. The full texts are the files
\texttt{LICENSE-TEXT} and \texttt{LICENSE} of the book's repository,
\url{https://github.com/dpbook/dpbook}.\par
\medskip
\noindent To cite this edition: The dpbook authors, \emph{Differential Privacy for Bounded and
Nonnegative Statistics}, edition %(version)s, 2026, \url{https://dpbook.github.io/dpbook/}
(the repository's \texttt{CITATION.cff} has the details). Errata: \url{https://dpbook.github.io/dpbook/book/errata.html}.\par
\clearpage
"""


def read_version(path=VERSION_FILE):
    """The string assigned to ``__version__`` in ``dpbook/_version.py``."""
    for node in ast.parse(Path(path).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [
            getattr(t, "id", None) for t in node.targets
        ] == ["__version__"]:
            return ast.literal_eval(node.value)
    raise ValueError(f"no __version__ = '...' line in {path}")


def on_config_inited(app, config):
    version = read_version()
    config.version = config.release = version
    subs = dict(getattr(config, "myst_substitutions", None) or {})
    subs.setdefault("version", version)
    config.myst_substitutions = subs
    options = dict(config.html_theme_options or {})
    footer = LICENCE_HTML.format(version=version)
    options["extra_footer"] = (
        f"{options['extra_footer']} {footer}" if options.get("extra_footer") else footer
    )
    config.html_theme_options = options
    latex = dict(config.latex_elements or {})
    latex.setdefault("releasename", "Edition")
    latex.setdefault("maketitle", FRONT_MATTER % {"version": version})
    config.latex_elements = latex


def setup(app):
    app.connect("config-inited", on_config_inited)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
