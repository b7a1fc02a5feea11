"""Copy the README's pictures out of the built, browser-tested site.

The site test (``tests/test_site.py``) saves a screenshot of every page under
``_build/screenshots/``.  This tool copies one chapter's screenshot and the first captioned figure
of that chapter (as rendered in ``_build/html/_images/``) to ``docs/img/chapter.png`` and
``docs/img/figure.png``, the two pictures the README shows.

    jupyter-book build . && python -m pytest tests/test_site.py && python tools/readme_images.py [--page
    book/part1/ch01_x]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"


def chapters(shots: Path):
    """Chapter pages (under book/partN/) that have a screenshot, in book order."""
    return sorted(
        p.stem.replace("__", "/")
        for p in shots.glob("book__part*.png")
        if "__widget" not in p.stem
    )


def first_figure(site: Path, page: str) -> Path | None:
    html = (site / f"{page}.html").read_text(encoding="utf-8")
    for block in re.findall(r"<figure\b.*?</figure>", html, flags=re.S):
        if src := re.search(r'<img[^>]+src="([^"]+\.png)"', block):
            return ((site / page).parent / src.group(1)).resolve()
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--page",
        help="the chapter, e.g. book/part1/ch01_x (default: the first with a figure)",
    )
    parser.add_argument(
        "--build",
        type=Path,
        default=ROOT / "_build",
        help="the build folder (default _build)",
    )
    args = parser.parse_args(argv)
    site, shots = args.build / "html", args.build / "screenshots"
    candidates = [args.page] if args.page else chapters(shots)
    if not candidates:
        sys.exit(
            f"no chapter screenshots in {shots}: build the book and run tests/test_site.py first"
        )
    for page in candidates:
        figure = first_figure(site, page)
        if figure is not None and figure.is_file():
            break
    else:
        sys.exit(f"no captioned PNG figure in {candidates}")
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shots / f"{page.replace('/', '__')}.png", OUT / "chapter.png")
    shutil.copyfile(figure, OUT / "figure.png")
    print(
        f"{page}: screenshot -> {OUT / 'chapter.png'}, figure {figure.name} -> {OUT / 'figure.png'}"
    )


if __name__ == "__main__":
    main()
