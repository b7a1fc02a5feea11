"""The wheel is the product: build it and the sdist, check them, install the wheel in a fresh environment.

``python -m build`` builds from a copy of the files git knows (tracked, or new and not ignored), so
neither the checkout's ``build/`` nor its ``*.egg-info`` leaks in and nothing is written into the
checkout.  The wheel is installed (not editable) into a new virtual environment by pip, which takes
numpy, scipy and the extras' packages from the package index (or pip's cache).  There, from a
folder outside the checkout: ``import dpbook`` imports numpy and scipy and nothing else, its version
is ``dpbook/_version.py``'s, the library's doctests pass from the installed files (with the
``[peers]`` extra, for the adapters' examples), and, with the ``[book]`` extra installed from the
wheel, Chapter 1 runs (nbclient).  Minutes: marked ``slow``.
"""

import ast
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# one worker for the module (its fixtures are built once) when the slow stage hands out tests one by one
# (.ci/run: --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]

ROOT = Path(__file__).resolve().parents[1]
VERSION = ast.literal_eval(
    next(
        line.split("=", 1)[1].strip()
        for line in (ROOT / "dpbook" / "_version.py").read_text().splitlines()
        if line.startswith("__version__")
    )
)
# the test harness in the fresh environment (not dependencies of dpbook), pinned like requirements.txt
HARNESS = ["pytest==9.1.1", "nbclient==0.11.0", "ipykernel==7.4.0"]
CHAPTER = ROOT / "book" / "part1" / "ch01_dp_laplace.ipynb"


def _run(cmd, **kw):
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert res.returncode == 0, (
        f"{cmd}\n--- stdout\n{res.stdout[-4000:]}\n--- stderr\n{res.stderr[-4000:]}"
    )
    return res.stdout


def _source_files():
    out = _run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard", "-z"])
    return [p for p in out.split("\0") if p and (ROOT / p).is_file()]


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    for rel in _source_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", out, src])
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(out.iterdir())
    return wheels[0], sdists[0]


def _pins(path):
    """The exact pins of requirements.txt and of its lock file, constraints.txt (``name==version`` lines, not
    dpbook itself), as a pip constraints file."""
    pins = []
    for name in ("requirements.txt", "constraints.txt"):
        if (ROOT / name).is_file():
            lines = (
                line.split("#")[0].strip()
                for line in (ROOT / name).read_text().splitlines()
            )
            pins += [
                line
                for line in lines
                if "==" in line and not line.lower().startswith(("-", "dpbook"))
            ]
    path.write_text("\n".join(pins) + "\n")
    return path


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory):
    """A fresh virtual environment with the wheel (not editable), at requirements.txt's pins; a cwd outside
    the checkout.  Returns ``(python, work folder, pip install command)``."""
    home = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", home / "env"])
    python = home / "env" / "bin" / "python"
    pip = [
        python,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "-c",
        _pins(home / "pins.txt"),
    ]
    _run([*pip, dist[0]])
    work = home / "work"
    work.mkdir()
    return python, work, pip


def test_twine_check(dist):
    out = _run([sys.executable, "-m", "twine", "check", "--strict", *dist])
    assert out.count("PASSED") == 2, out


def test_wheel_holds_the_library_the_support_package_and_the_licence(dist):
    names = zipfile.ZipFile(dist[0]).namelist()
    info = f"dpbook-{VERSION}.dist-info"
    assert {n.split("/")[0] for n in names} == {"dpbook", "dpbook_book", info}
    assert "dpbook/interop/opendp.py" in names and "dpbook_book/exercises.py" in names
    assert not [
        n
        for n in names
        if n.endswith(".ipynb") or "/tests/" in n or n.startswith(("book/", "tools/"))
    ]
    assert f"{info}/licenses/LICENSE" in names
    meta = zipfile.ZipFile(dist[0]).read(f"{info}/METADATA").decode()
    assert f"\nVersion: {VERSION}\n" in meta
    assert (
        "\nLicense-Expression: BSD-3-Clause\n" in meta
        and "\nLicense-File: LICENSE\n" in meta
    )
    assert (
        "BSD 3-Clause License"
        in zipfile.ZipFile(dist[0]).read(f"{info}/licenses/LICENSE").decode()
    )


def test_import_dpbook_imports_only_numpy_and_scipy(venv):
    python, work, _ = venv
    # every module import dpbook loads from a file in site-packages, by its top-level folder there; a module
    # loaded from anywhere else but the standard library is named too
    code = (
        "import os, sys, sysconfig; before = set(sys.modules); import dpbook\n"
        "site, std = sysconfig.get_paths()['purelib'], sysconfig.get_paths()['stdlib']\n"
        "seen = set()\n"
        "for name in set(sys.modules) - before:\n"
        "    f = getattr(sys.modules[name], '__file__', None)\n"
        "    if f and os.path.abspath(f).startswith(site + os.sep):\n"
        "        seen.add(os.path.relpath(f, site).split(os.sep)[0])\n"
        "    elif f and not os.path.abspath(f).startswith(std + os.sep):\n"
        "        seen.add(name)\n"
        "print(sorted(seen)); print(dpbook.__version__); print(dpbook.__file__)"
    )
    third_party, version, path = _run([python, "-c", code], cwd=work).splitlines()
    assert third_party == "['dpbook', 'numpy', 'scipy']"
    assert version == VERSION
    assert "site-packages" in path and str(ROOT) not in path


def test_doctests_pass_from_the_installed_package(dist, venv):
    python, work, pip = venv
    _run([*pip, f"{dist[0]}[peers]", *HARNESS])  # the adapters' examples need the peers
    out = _run(
        [
            python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            os.devnull,
            "--rootdir",
            work,
            "--doctest-modules",
            "--pyargs",
            "dpbook",
        ],
        cwd=work,
    )
    assert " passed" in out and "failed" not in out, out


def test_a_chapter_runs_with_the_book_extra(dist, venv):
    python, work, pip = venv
    _run([*pip, f"{dist[0]}[book]", *HARNESS])
    shutil.copy2(CHAPTER, work / CHAPTER.name)
    # the environment's own kernel (ipykernel's native "python3", no user kernel spec in the way); a last
    # cell says which Python ran the chapter and which dpbook it imported
    code = (
        "import sys, nbformat; from nbclient import NotebookClient; nb = nbformat.read(sys.argv[1], 4); "
        "nb.cells.append(nbformat.v4.new_code_cell("
        "'import sys, dpbook; print(sys.executable); print(dpbook.__file__)')); "
        "NotebookClient(nb, timeout=600, kernel_name='python3', resources={'metadata': {'path': '.'}}).execute(); "
        "print(sum(c.cell_type == 'code' for c in nb.cells)); print(nb.cells[-1].outputs[0]['text'])"
    )
    env = {
        **os.environ,
        "MPLBACKEND": "Agg",
        "HOME": str(work),
        "JUPYTER_DATA_DIR": str(work / "jupyter"),
    }
    for name in ("PYTHONPATH", "JUPYTER_PATH"):
        env.pop(name, None)
    cells, executable, path = _run(
        [python, "-c", code, CHAPTER.name], cwd=work, env=env
    ).split()
    assert int(cells) > 10
    assert (
        Path(executable).parent == python.parent
        and "site-packages" in path
        and str(ROOT) not in path
    )
