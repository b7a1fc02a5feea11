"""Each HTML page as the reader gets it (``html-page-context``).

- **Light pages.**  A view's frames (``dpbook_book.widgets``) are PNG images inside the page's
  widget state, one ``data:`` URI each.  Each is written once into the site as a file named after
  its content (``_views/<sha256>.png``) and the page points at it instead, so a chapter's HTML
  carries no image data: the widget manager renders only a stack's selected frame, so a frame is
  fetched (from the same site, offline too) when a control selects it, with its alt text.
- The theme's JupyterLite launch button points at the lite site built with the book.
- Scripts registered twice (sphinx-thebe and sphinx-togglebutton under jupyter-book) appear once:
  a repeated ``const`` declaration is a JavaScript error.
- The bibliography's entries are list items for screen readers.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path

from .lite import LITE_DIR

#: where the views' frames live in the site
VIEWS_DIR = "_views"
#: the MIME type of the widget state myst-nb embeds in a page (a ``<script>`` with a JSON body)
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_DATA_PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/]+={0,2})")


def frame_name(png: bytes) -> str:
    """The file name of a frame in :data:`VIEWS_DIR`: its content's hash, so equal frames are one file."""
    return hashlib.sha256(png).hexdigest()[:20] + ".png"


def externalize_frames(state: str, outdir, pagename: str) -> tuple[str, int]:
    """``state`` (a page's widget state JSON) with every embedded PNG written out as a file.

    Each ``data:image/png;base64,...`` URI becomes a URL relative to the page
    (``pagename``, e.g. ``book/part1/ch01``) of ``<outdir>/_views/<hash>.png``.  Returns the new
    text and the number of frames.
    """
    folder = Path(outdir) / VIEWS_DIR
    up = os.path.relpath(VIEWS_DIR, os.path.dirname(pagename) or ".").replace(os.sep, "/")
    count = 0

    def write(match):
        nonlocal count
        png = base64.b64decode(match.group(1))
        name = frame_name(png)
        path = folder / name
        if not path.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png)
        count += 1
        return f"{up}/{name}"

    return _DATA_PNG.sub(write, state), count


def _light_scripts(app, pagename, scripts):
    for k, js in enumerate(scripts):
        attributes = getattr(js, "attributes", None) or {}
        if attributes.get("type") != WIDGET_STATE or "body" not in attributes:
            continue
        body, n = externalize_frames(attributes["body"], app.outdir, pagename)
        if n:
            scripts[k] = type(js)(js.filename, priority=js.priority, **{**attributes, "body": body})


def on_page_context(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        seen, unique = set(), []
        for js in scripts:
            key = (os.fspath(getattr(js, "filename", js) or ""),
                   tuple(sorted((k, v) for k, v in getattr(js, "attributes", {}).items() if k != "body")),
                   getattr(js, "attributes", {}).get("body"))
            if key not in seen:
                seen.add(key)
                unique.append(js)
        scripts[:] = unique
        _light_scripts(app, pagename, scripts)
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
