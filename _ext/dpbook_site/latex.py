"""The print edition (LaTeX): numbering as on the site, "Solution to Exercise N.M", proofs as text,
parts titled by LaTeX, the bibliography in place; and the site's page about the print edition.
"""

from __future__ import annotations

import re


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


def print_solution_titles():
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
                if (
                    not entry
                    or not node.children
                    or not isinstance(node.children[0], nodes.title)
                ):
                    continue
                exercise = entry["node"]
                ids = exercise.get("ids") or [""]
                number = (
                    self.env.toc_fignumbers.get(entry["docname"], {})
                    .get("exercise", {})
                    .get(ids[0])
                )
                if not number:
                    continue
                title = node.children[0]
                title.children = []
                title += nodes.Text(
                    f"Solution to Exercise {'.'.join(map(str, number))}"
                )

    return PrintSolutionTitles


def print_proofs():
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
                if "proof" in node["classes"] and not any(
                    isinstance(c, nodes.title) for c in node.children
                ):
                    node.replace_self(
                        nodes.container("", *node.children, classes=["proof"])
                    )

    return PrintProofs


def print_part_titles():
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
                if not isinstance(section, nodes.section) or section.get(
                    "docname"
                ) != start.get("docname"):
                    continue
                title = section.children[0] if section.children else None
                if isinstance(title, nodes.title):
                    text = title.astext()
                    short = re.sub(r"^Part [IVXLC]+:\s*", "", text)
                    if short and short != text:
                        title.children = []
                        title += nodes.Text(short)

    return PrintPartTitles


def print_bibliography():
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
                docnames = {
                    key.docname for key in self.env.get_domain("cite").bibliographies
                }
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
                    if title in section["names"] and isinstance(
                        section.children[0], nodes.title
                    ):
                        bibs[0].parent.remove(bibs[0])
                        section.insert(1, bibs[0])
                        return

    return PrintBibliographyInPlace


#: the print edition's file in the site, and the site's page about it (the intro links the page)
SITE_PDF = "dpbook.pdf"
PRINT_PAGE = "print-edition.html"

_PRINT_PAGE_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>The print edition — dpbook</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.6;
       color: #222; background: #fff; margin: 0; }}
main {{ max-width: 40rem; margin: 0 auto; padding: 1.5rem 1rem; }}
a {{ color: #0a58ca; }}
code {{ font-size: 0.95em; overflow-wrap: anywhere; }}
</style></head>
<body><main>
<h1>The print edition</h1>
{body}
<p><a href="book/intro.html">Back to the introduction</a></p>
</main></body></html>
"""


def write_print_page(site) -> str:
    """Write the site's page about the print edition; return ``"pdf"`` or ``"none"``, what it offers.

    With the PDF in the site (``tools/print_edition.py`` copies it there after the HTML build) the
    page links it, with its size; without it the page says how to build it.  The HTML build and the
    print edition both write the page, so the intro's link to it never dead-ends, in either order.
    """
    from pathlib import Path

    site = Path(site)
    pdf = site / SITE_PDF
    if pdf.is_file():
        size = pdf.stat().st_size / 1e6
        body = (
            f'<p>The whole book as one PDF file: <a href="{SITE_PDF}">{SITE_PDF}</a> ({size:.1f} MB). '
            "It has every chapter, with each interactive figure at its default settings, the theorem "
            "boxes numbered as on this site, and the solutions after their exercises.</p>"
        )
        offers = "pdf"
    else:
        body = (
            "<p>This copy of the site was built without its print edition (the PDF is a separate "
            "step after the HTML build, and needs XeLaTeX). In a clone of the book's repository, "
            "after <code>jupyter-book build .</code>, run <code>python tools/print_edition.py</code>: "
            f"it writes the PDF, copies it into the site as <code>{SITE_PDF}</code> and links it "
            "from this page.</p>"
        )
        offers = "none"
    text = _PRINT_PAGE_HTML.format(body=body)
    path = site / PRINT_PAGE
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return offers
