"""Each HTML page as the reader gets it (``html-page-context``).

- **Light pages.**  A view's frames (``dpbook_book.widgets``) are PNG images inside the page's
  widget state, one ``data:`` URI each.  Each is written once into the site as a file named after
  its content (``_views/<sha256>.png``) and the page points at it instead, so a chapter's HTML
  carries no image data: the widget manager renders only a stack's selected frame, so a frame is
  fetched (from the same site, offline too) when a control selects it, with its alt text.  The
  frames' identical layout and style models are merged into one each (:func:`share_models`).
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
    up = os.path.relpath(VIEWS_DIR, os.path.dirname(pagename) or ".").replace(
        os.sep, "/"
    )
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


#: widget models that hold no reference to another model: identical ones can be one model
_LEAF_MODELS = (
    "LayoutModel",
    "HTMLStyleModel",
    "DescriptionStyleModel",
    "SliderStyleModel",
    "StyleModel",
)


def share_models(state: str) -> tuple[str, int]:
    """``state`` (a page's widget state JSON) with identical layout and style models merged into one.

    Every frame of a view is an HTML widget with a layout and a style model of its own, all alike:
    the widget manager renders views from shared models just the same, and the page is lighter.
    Returns the new text and the number of models dropped.
    """
    import json

    data = json.loads(state)
    models = data.get("state", {})
    canonical, alias = {}, {}
    for mid, model in models.items():
        if model.get("model_name") in _LEAF_MODELS and "IPY_MODEL_" not in json.dumps(
            model.get("state", {})
        ):
            key = json.dumps(model, sort_keys=True)
            if key in canonical:
                alias[mid] = canonical[key]
            else:
                canonical[key] = mid
    if not alias:
        return state, 0
    for mid in alias:
        del models[mid]
    text = json.dumps(data)
    text = re.sub(
        r"IPY_MODEL_([0-9a-f]+)",
        lambda m: "IPY_MODEL_" + alias.get(m.group(1), m.group(1)),
        text,
    )
    return text.replace("</script>", r"<\/script>"), len(alias)


def _light_scripts(app, pagename, scripts):
    for k, js in enumerate(scripts):
        attributes = getattr(js, "attributes", None) or {}
        if attributes.get("type") != WIDGET_STATE or "body" not in attributes:
            continue
        body, n = externalize_frames(attributes["body"], app.outdir, pagename)
        body, shared = share_models(body)
        if n or shared:
            scripts[k] = type(js)(
                js.filename, priority=js.priority, **{**attributes, "body": body}
            )


def on_page_context(app, pagename, _templatename, context, doctree):
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        seen, unique = set(), []
        for js in scripts:
            key = (
                os.fspath(getattr(js, "filename", js) or ""),
                tuple(
                    sorted(
                        (k, v)
                        for k, v in getattr(js, "attributes", {}).items()
                        if k != "body"
                    )
                ),
                getattr(js, "attributes", {}).get("body"),
            )
            if key not in seen:
                seen.add(key)
                unique.append(js)
        scripts[:] = unique
        _light_scripts(app, pagename, scripts)
    # docutils writes the bibliography as a role="list" whose entries have role="doc-biblioentry",
    # which is not a list item: screen readers (and axe's aria-required-children) want listitems
    body = context.get("body")
    if isinstance(body, str) and 'class="citation-list"' in body:
        context["body"] = re.sub(
            r'(<div class="citation" [^>]*role=")doc-biblioentry(")',
            r"\1listitem\2",
            body,
        )
    _lite_button(app, pagename, context)


def _lite_button(app, pagename, context):
    """The launch menu's "JupyterLite" entry, a page-relative link into the lite site built with the book.

    sphinx-book-theme 1.1 (the release pinned with its working pydata-sphinx-theme) has no JupyterLite
    button of its own: a notebook chapter gets one beside Binder and Colab (a theme that makes one
    gets its link pointed into the site instead).
    """
    url = app.config.html_theme_options.get("launch_buttons", {}).get("jupyterlite_url")
    if not url or pagename not in app.env.found_docs:
        return
    source = Path(app.env.doc2path(pagename))
    if source.suffix != ".ipynb":
        return
    path = source.relative_to(app.srcdir).as_posix()
    link = context["pathto"](f"{LITE_DIR}/lab/index.html", 1) + "?path=" + path
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        buttons = group.setdefault("buttons", [])
        own = [b for b in buttons if b.get("text") == "JupyterLite"]
        if own:
            for button in own:
                button["url"] = link
        else:
            buttons.append(
                {
                    "type": "link",
                    "text": "JupyterLite",
                    "tooltip": "Launch in JupyterLite (in your browser)",
                    "icon": "fas fa-laptop-code",
                    "url": link,
                }
            )
