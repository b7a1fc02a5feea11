"""Offline assets: MathJax 3, the ipywidgets HTML manager and axe-core, served by the site itself.

They are fetched at build time with ``npm pack`` (exact versions; npm checks each tarball's
integrity) from the npm registry into a cache under ``_build/`` (never committed), and copied into
the site under ``_offline/`` through ``html_extra_path`` — not into ``_static/``, whose every
``.js``/``.css`` jupyter-book injects into every page.  ``_config.yml`` points ``mathjax_path`` and
``nb_ipywidgets_js`` at these copies; the build fails loudly if a package cannot be fetched or a
referenced file is missing.  ``/favicon.ico`` is written here too.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path, PurePosixPath

from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

OFFLINE_DIR = "_offline"

DEFAULT_PACKAGES = {
    "mathjax@3.2.2": {"es5": "mathjax"},
    "@jupyter-widgets/html-manager@1.0.15": {"dist": "html-manager"},
    # the accessibility engine the site test injects into each page (no page loads it itself)
    "axe-core@4.11.1": {"axe.min.js": "axe/axe.min.js"},
}


_SKIP_SUFFIXES = (".map", ".ts", ".md")


def _cache_root(app) -> Path:
    override = os.environ.get("DPBOOK_ASSET_CACHE")
    if override:
        return Path(override).resolve()
    return Path(app.outdir).resolve().parent / ".offline-cache"


def _npm_pack(spec: str, dest: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise ExtensionError(
            "dpbook_site: `npm` is not on PATH; it is needed to fetch the offline assets "
            f"({spec}) from the npm registry"
        )
    proc = subprocess.run(
        [npm, "pack", spec, "--json", "--pack-destination", str(dest)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        raise ExtensionError(
            f"dpbook_site: `npm pack {spec}` failed:\n{proc.stderr.strip()}"
        )
    start = proc.stdout.find("[")
    try:
        filename = json.loads(proc.stdout[start:])[0]["filename"]
    except (ValueError, LookupError) as exc:
        raise ExtensionError(
            f"dpbook_site: unexpected output of `npm pack {spec}`: {proc.stdout!r}"
        ) from exc
    # npm names scoped tarballs "scope-name-version.tgz"
    return dest / filename.lstrip("@").replace("/", "-")


def _extract(tarball: Path, mapping: dict, target: Path) -> int:
    """Extract the members of ``tarball`` under each source path into ``target/destination``."""
    count = 0
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            rel = PurePosixPath(member.name).relative_to("package")
            for src, dst in mapping.items():
                if rel == PurePosixPath(src):
                    out = target / dst
                elif PurePosixPath(src) in rel.parents:
                    if rel.name.endswith(_SKIP_SUFFIXES):
                        break
                    out = target / dst / rel.relative_to(src)
                else:
                    continue
                out.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(member) as fh:
                    out.write_bytes(fh.read())
                count += 1
                break
    return count


def fetch_offline_assets(app) -> Path:
    """Fetch every configured npm package (once; cached) and return the ``html_extra_path`` root."""
    packages = app.config.dpbook_offline_packages or DEFAULT_PACKAGES
    key = hashlib.sha256(json.dumps(packages, sort_keys=True).encode()).hexdigest()[:12]
    root = _cache_root(app) / key
    site = root / "site"
    stamp = root / "complete.json"
    if stamp.exists():
        return site
    shutil.rmtree(root, ignore_errors=True)
    target = site / OFFLINE_DIR
    target.mkdir(parents=True)
    t0 = time.perf_counter()
    manifest = {}
    with tempfile.TemporaryDirectory() as tmp:
        for spec, mapping in packages.items():
            tarball = _npm_pack(spec, Path(tmp))
            n = _extract(tarball, mapping, target)
            if n == 0:
                raise ExtensionError(
                    f"dpbook_site: {spec} holds none of {sorted(mapping)}"
                )
            manifest[spec] = n
    stamp.write_text(json.dumps(manifest, indent=1))
    logger.info(
        f"[dpbook_site] fetched offline assets {manifest} in {time.perf_counter() - t0:.1f} s"
    )
    return site


def _write_if_changed(path: Path, data: bytes) -> None:
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)


def write_favicon(app, site: Path) -> None:
    """Write ``/favicon.ico``: browsers ask for it on pages without an icon link (the root redirect page).

    It is the configured PNG favicon in an ICO container (a directory entry pointing at the PNG).
    """
    favicon = app.config.html_favicon
    if favicon and "://" not in favicon and favicon.endswith(".png"):
        png = (Path(app.confdir) / favicon).read_bytes()
        width, height = struct.unpack(">II", png[16:24])
        header = struct.pack("<HHH", 0, 1, 1)
        entry = struct.pack(
            "<BBBBHHII", width % 256, height % 256, 0, 0, 1, 32, len(png), 6 + 16
        )
        _write_if_changed(site / "favicon.ico", header + entry + png)


def _local_targets(app):
    """The site-relative paths of the local assets the configuration points pages to."""
    paths = [
        app.config.mathjax_path,
        *getattr(app.config, "nb_ipywidgets_js", {}).keys(),
    ]
    for p in paths:
        if "://" in p:
            raise ExtensionError(
                f"dpbook_site: {p!r} is a remote URL; the book must load it from {OFFLINE_DIR}/ to work offline"
            )
        yield os.path.normpath(os.path.join("_static", p))


def on_builder_inited(app):
    if app.builder.format != "html":
        return
    site = fetch_offline_assets(app)
    write_favicon(app, site)
    for rel in _local_targets(app):
        if not (site / rel).is_file():
            raise ExtensionError(
                f"dpbook_site: the configuration loads {rel!r} but the fetched assets hold no such file"
            )
    extra = [str(p) for p in app.config.html_extra_path]
    if str(site) not in extra:
        app.config.html_extra_path = [*extra, str(site)]


def check_site(app):
    """After an HTML build: every offline asset the configuration loads is in the site."""
    missing = [
        rel for rel in _local_targets(app) if not (Path(app.outdir) / rel).is_file()
    ]
    if missing:
        raise ExtensionError(
            f"dpbook_site: the site is missing its offline assets {missing}"
        )
