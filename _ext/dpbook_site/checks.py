"""Doctree checks: every image says what it shows.

An image in a captioned figure gets the caption's plain text as alt text; a notebook output image
still left without a meaningful alt is reported with its notebook and cell (a warning, so the
strict build, ``-W``, fails).
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

#: alt texts that say nothing about an image
_GENERIC_ALT = {
    "",
    "image",
    "img",
    "figure",
    "fig",
    "output",
    "plot",
    "chart",
    "graph",
    "picture",
    "png",
    "svg",
    "jpg",
    "jpeg",
    "gif",
    "untitled",
    "none",
    "alt",
    "todo",
}


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
        if (
            getattr(node, "tagname", "") == "container"
            and node.get("nb_element") == "cell_code"
        ):
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
            first = (
                block.astext().strip().splitlines()[0][:70]
                if block.astext().strip()
                else ""
            )
            break
        logger.warning(
            f"notebook output image with {why}: {rel}, cell {cell['cell_index']} (0-based index in "
            f"the notebook's cells; its code starts {first!r}). Say what the image shows in the cell's "
            'metadata: {"mystnb": {"image": {"alt": "..."}}} (or give it a caption: '
            '{"mystnb": {"figure": {"caption": "..."}}})',
            location=image,
            type="dpbook",
            subtype="alt",
        )
