"""Execute the book's chapters on every core, into the execution cache the build reads.

``jupyter-book build .`` executes the chapters one after the other (``execute_notebooks: cache``,
myst-nb's cache mode), so on a two-core machine half the machine idles through the build's longest
stage.  This tool executes them in parallel, one kernel per core, exactly as the build would
(jupyter-cache's ``single_nb_execution`` in the notebook's folder, the timeout and ``allow_errors``
of ``_config.yml``, the kernels' encrypted transport), and stores each executed notebook in the
same cache (``<path-output>/_build/.jupyter_cache/<library hash>``, see
``_ext/dpbook_site/cache.py``).  The build that follows then finds every chapter cached and
executes nothing; a chapter already in the cache is not executed again.  The README's test command
leaves there every chapter it ran whole (``_ext/dpbook_site/nbval_cache.py``), so after it this tool
executes only what the tests did not run, and reports the seconds the cache recorded for the rest.

    python tools/execute_book.py [--path-output DIR] [--jobs N] [--budget SECONDS] [--book-budget SECONDS]
                                 [CHAPTER ...]

It prints each chapter's execution seconds and the wall time, and the whole book's: the wall time of
every chapter's seconds (its own runs', or those recorded in the cache) handed out largest first to the
``--jobs`` cores (:func:`two_core_wall`).  It exits with 2 when a chapter fails to execute, 1 when one took
longer than ``--budget`` or the book longer than ``--book-budget`` (issue 26: "under 3 minutes on this 2-core
machine", no chapter over 20 s), else 0.  These are seconds of a shared machine on the day: CI reports an
overrun and does not fail on it (the project measures speed by ratios to a baseline timed next to it, not
by timed tests).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

from dpbook_site import cache as site_cache  # noqa: E402
from dpbook_site.cache import encrypt_kernel_transport, library_hash  # noqa: E402


def chapters(root: Path = ROOT) -> list[Path]:
    """The notebooks of ``_toc.yml``, in its order (the build's ``only_build_toc_files``)."""
    return site_cache.chapters(root)


def execution_settings(root: Path = ROOT) -> dict:
    """The ``execute:`` settings of ``_config.yml`` the build executes with."""
    config = yaml.safe_load((root / "_config.yml").read_text()).get("execute", {})
    if config.get("execute_notebooks") != "cache":
        raise ValueError(
            "execute_notebooks must be 'cache' in _config.yml for the build to read what this "
            f"tool executes, not {config.get('execute_notebooks')!r}"
        )
    return {
        "timeout": config.get("timeout", 30),
        "allow_errors": config.get("allow_errors", False),
    }


def cache_path(path_output: Path, root: Path = ROOT) -> Path:
    """The cache folder the build of ``--path-output path_output`` reads (``_ext/dpbook_site/cache.py``)."""
    return (
        Path(path_output).resolve() / "_build" / ".jupyter_cache" / library_hash(root)
    )


def _execute(path: str, timeout: int, allow_errors: bool):
    """Execute one chapter in its folder (a worker process); returns the notebook and the outcome."""
    from jupyter_cache.executors.utils import single_nb_execution

    encrypt_kernel_transport()
    nb = nbformat.read(path, as_version=4)
    result = single_nb_execution(
        nb,
        cwd=str(Path(path).parent),
        allow_errors=allow_errors,
        timeout=timeout,
        meta_override=True,
    )
    error = None if result.err is None else result.exc_string
    return path, nbformat.writes(nb), result.time, error


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path-output", type=Path, default=ROOT)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--budget", type=float, default=None)
    parser.add_argument("--book-budget", type=float, default=None)
    parser.add_argument(
        "only", nargs="*", type=Path, help="these chapters only (default: every one)"
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, not {args.jobs}")
    for name, value in (("--budget", args.budget), ("--book-budget", args.book_budget)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be positive, not {value}")

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    settings = execution_settings()
    cache = get_cache(str(cache_path(args.path_output)))
    todo, cached = [], {}
    selected = {p.resolve() for p in args.only}
    for path in chapters():
        if selected and path.resolve() not in selected:
            continue
        try:
            record = cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            todo.append(path)
        else:
            # executed before (by this tool, the build, or the test command: _ext/dpbook_site/nbval_cache.py)
            cached[path.relative_to(ROOT).as_posix()] = record.data.get(
                "execution_seconds"
            )
    print(
        f"execute_book: {len(todo)} chapters to execute on {args.jobs} cores, "
        f"{len(cached)} found executed in the cache {cache.path}",
        flush=True,
    )
    for name, took in cached.items():
        print(
            f"{'?' if took is None else f'{took:.1f}':>7} s  {name} (cached)",
            flush=True,
        )
    start = time.perf_counter()
    seconds, failed = {}, []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        # the largest chapters first, so that the cores tend to finish together
        todo.sort(key=lambda p: -p.stat().st_size)
        futures = [
            pool.submit(_execute, str(p), settings["timeout"], settings["allow_errors"])
            for p in todo
        ]
        for future in as_completed(futures):
            path, text, took, error = future.result()
            name = Path(path).relative_to(ROOT).as_posix()
            seconds[name] = took
            if error is not None:
                failed.append(name)
                print(f"FAILED {name}\n{error}", flush=True)
                continue
            stage = cache.add_nb_to_project(path)
            cache.cache_notebook_bundle(
                CacheBundleIn(
                    nbformat.reads(text, as_version=4),
                    stage.uri,
                    data={"execution_seconds": took},
                ),
                check_validity=False,
                overwrite=True,
            )
            print(f"{took:7.1f} s  {name}", flush=True)
    wall = time.perf_counter() - start
    print(
        f"execute_book: {len(seconds)} chapters, {sum(seconds.values()):.1f} s of kernel time "
        f"in {wall:.1f} s wall on {args.jobs} cores"
    )
    # the budget holds for every chapter, those found in the cache too (their recorded seconds)
    timed = {**{k: v for k, v in cached.items() if v is not None}, **seconds}
    over = {k: v for k, v in timed.items() if args.budget and v > args.budget}
    for name, took in sorted(over.items(), key=lambda kv: -kv[1]):
        print(f"over the {args.budget:g} s budget: {name} ({took:.1f} s)")
    book = two_core_wall(list(timed.values()), args.jobs)
    print(
        f"the book: {sum(timed.values()):.1f} s of chapters, {book:.1f} s on {args.jobs} cores"
        + (f" (budget {args.book_budget:g} s)" if args.book_budget else "")
    )
    book_over = bool(args.book_budget) and book > args.book_budget
    if book_over:
        print(f"over the book's {args.book_budget:g} s budget: {book:.1f} s")
    return 2 if failed else 1 if over or book_over else 0


def two_core_wall(seconds, cores):
    """The wall time of chapters of ``seconds`` handed out largest first to whichever of ``cores`` is free (the book's
    budget: :func:`main` hands the chapters it executes out by size, the nearest it knows before running them): at
    least their sum over the cores, and at least the longest."""
    load = [0.0] * cores
    for t in sorted(seconds, reverse=True):
        load[load.index(min(load))] += t
    return max(load)


if __name__ == "__main__":
    sys.exit(main())
