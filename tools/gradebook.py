"""Grade a class's submissions of one assignment with ``otter run`` and write a gradebook CSV.

    python tools/gradebook.py AUTOGRADER_ZIP SUBMISSIONS_DIR [--out gradebook.csv] [--jobs N]
                              [--timeout SECONDS] [--cell-timeout SECONDS] [--memory MB] [--wide]
    python tools/gradebook.py --roster-dir _build/assignments/students CH SUBMISSIONS_DIR ...

``SUBMISSIONS_DIR`` holds one file per student, a notebook (``ID.ipynb``) or the zip its export cell
wrote (``ID.zip``); the student's id is the file name without its extension (a trailing
``_chNN`` or ``-chNN`` is dropped).  With ``--roster-dir`` each student is graded with the
autograder of their own variant (``tools/assignments.py --roster``: ``DIR/ID/chNN/dist/autograder``).

**Submissions are code: grading runs it.**  Each submission is graded by its own ``otter run``
process, started in a fresh scratch folder holding a copy of the submission and of the autograder,
with ``HOME`` and ``TMPDIR`` pointing there, and limits: each cell of the submission may run
``--cell-timeout`` seconds (a first cell added to the copy raises ``TimeoutError`` in a cell that
runs longer, so an endless loop costs its question), the whole grading ``--timeout`` seconds (its
process group is then killed), and CPU time and address space (``resource.setrlimit``; ``--memory``,
so a cell that exhausts memory gets a ``MemoryError``).  On Linux, where ``unshare`` and ``setpriv``
can (as root, or with unprivileged user namespaces), the process also runs in its own mount and
process namespaces in which every file system is read-only except its scratch folder, with no
capabilities left: it cannot delete or change a file outside its folder, nor see the other graders'
processes.  Elsewhere (macOS, a kernel without user namespaces) it runs as you and *could* read or
delete anything you can; the tool says which at the start.  Where Docker is available, ``otter
grade`` (each submission in its own container) is the stronger choice.  A submission whose grading
failed without hitting a limit is graded again, alone, after the others.

The gradebook has one row per student and question (``student,question,points,max_points``) and a
``total`` row per student (``question`` = ``total``), ready for a learning-management-system import;
``--wide`` writes one row per student, one column per question, then ``total`` and ``status``.
Written (manually graded) questions are not in it: grade them on the platform or by hand.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

#: the file name suffixes of a submission
SUFFIXES = (".ipynb", ".zip")

#: run inside a new mount namespace: every file system read-only but the scratch folder ($1), then the
#: command with no capabilities left (so it cannot remount anything writable)
ISOLATE = r"""set -e
scratch="$1"; shift
mount --bind "$scratch" "$scratch"
for m in $(awk '{print $5}' /proc/self/mountinfo | sort -u); do
  case "$m" in "$scratch"|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) ;;
    *) mount -o remount,bind,ro "$m" 2>/dev/null || true ;;
  esac
done
exec setpriv --bounding-set=-all --inh-caps=-all --no-new-privs -- "$@"
"""


def _isolation_prefix():
    """The command prefix that confines a grading process, or None where this system cannot."""
    if sys.platform != "linux" or not (
        shutil.which("unshare") and shutil.which("setpriv")
    ):
        return None
    base = [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--pid",
        "--fork",
        "--mount-proc",
    ]
    if os.geteuid() != 0:
        base[1:1] = ["--user", "--map-root-user"]
    return base


_ISOLATION = {}


def isolation():
    """The confinement available here (checked once, by trying to write outside a scratch folder):
    the command prefix, or None."""
    if "prefix" not in _ISOLATION:
        prefix, ok = _isolation_prefix(), False
        if prefix is not None:
            with tempfile.TemporaryDirectory(prefix="dpbook-iso-") as tmp:
                scratch = Path(tmp) / "scratch"
                scratch.mkdir()
                probe = Path(tmp) / "outside"
                probe.write_text("x")
                script = Path(tmp) / "isolate.sh"
                script.write_text(ISOLATE)
                try:
                    run = subprocess.run(
                        [
                            *prefix,
                            "--",
                            "sh",
                            str(script),
                            str(scratch),
                            "sh",
                            "-c",
                            f"echo y > {scratch}/inside; rm -f {probe}; true",
                        ],
                        capture_output=True,
                        timeout=60,
                    )
                    ok = (
                        run.returncode == 0
                        and probe.exists()
                        and (scratch / "inside").exists()
                    )
                except (OSError, subprocess.SubprocessError):
                    ok = False
        _ISOLATION["prefix"] = prefix if ok else None
    return _ISOLATION["prefix"]


@dataclass
class Result:
    """The grade of one submission: ``scores`` = {question: (points, max_points)}, and how it went."""

    student: str
    scores: dict = field(default_factory=dict)
    status: str = "graded"
    seconds: float = 0.0

    @property
    def total(self):
        return sum(p for p, _ in self.scores.values())


def student_id(path):
    """The student's id from a submission's file name (``ada.ipynb``, ``ada_ch02.zip`` -> ``ada``)."""
    stem = Path(path).stem
    return re.sub(r"[_-]ch\d+$", "", stem) or stem


def submissions(folder):
    """``{student: path}`` for the submissions in ``folder`` (a notebook or an exported zip each)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"submissions folder {str(folder)!r} is not a folder")
    out = {}
    for path in sorted(folder.iterdir()):
        if path.suffix not in SUFFIXES or path.name.startswith("."):
            continue
        sid = student_id(path)
        if sid in out:
            raise ValueError(
                f"two submissions for student {sid!r}: {out[sid].name} and {path.name}"
            )
        out[sid] = path
    if not out:
        raise ValueError(f"no submission (*.ipynb, *.zip) in {str(folder)!r}")
    return out


def _limits(seconds, memory_mb):
    """The limits a grading process sets on itself before it starts (``preexec_fn``)."""

    def apply():
        os.setsid()  # its own process group, killed as a whole at the deadline
        cpu = int(seconds) + 5
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        if memory_mb:
            limit = int(memory_mb) * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


CELL_LIMIT = """\
# added by tools/gradebook.py when grading: a cell running longer than {seconds:g} s raises TimeoutError,
# so a cell that never ends costs its own question, not the whole notebook
import signal as _dpbook_signal


def _dpbook_alarm(signum, frame):
    raise TimeoutError("this cell ran longer than {seconds:g} s when graded")


_dpbook_signal.signal(_dpbook_signal.SIGALRM, _dpbook_alarm)
get_ipython().events.register("pre_run_cell", lambda *args: _dpbook_signal.alarm({whole}))
get_ipython().events.register("post_run_cell", lambda *args: _dpbook_signal.alarm(0))
"""


def limit_cells(path, seconds):
    """Give the submission at ``path`` (a notebook, or an exported zip holding one) a first cell that
    limits every cell's run time to ``seconds`` (rewritten in place; it is the scratch copy)."""
    import zipfile

    import nbformat

    def limited(nb):
        cell = nbformat.v4.new_code_cell(
            CELL_LIMIT.format(seconds=seconds, whole=max(1, int(round(seconds))))
        )
        nb.cells.insert(0, cell)
        return nb

    path = Path(path)
    if path.suffix == ".ipynb":
        nbformat.write(limited(nbformat.read(path, as_version=4)), path)
        return
    with zipfile.ZipFile(path) as zf:
        items = [(info, zf.read(info)) for info in zf.infolist()]
    notebooks = [
        info.filename
        for info, _ in items
        if info.filename.endswith(".ipynb") and "/" not in info.filename
    ]
    if len(notebooks) != 1:
        raise ValueError(
            f"submission {path.name}: expected one notebook in the zip, found {len(notebooks)}"
        )
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for info, data in items:
            if info.filename == notebooks[0]:
                data = nbformat.writes(
                    limited(nbformat.reads(data.decode("utf-8"), as_version=4))
                ).encode("utf-8")
            zf.writestr(info, data)


def grade_one(
    student,
    submission,
    autograder,
    timeout=600,
    memory_mb=4096,
    python=sys.executable,
    keep=None,
    isolate=True,
    cell_timeout=120,
):
    """Grade one submission in its own process and scratch folder; returns a :class:`Result`."""
    start = time.monotonic()
    scratch = Path(
        tempfile.mkdtemp(
            prefix=f"dpbook-grade-{re.sub(r'[^A-Za-z0-9_.-]', '_', student)}-"
        )
    )
    try:
        work = scratch / "work"
        work.mkdir()
        sub = work / f"submission{Path(submission).suffix}"
        shutil.copy(submission, sub)
        if cell_timeout:
            try:
                limit_cells(sub, cell_timeout)
            except Exception as err:  # an unreadable notebook is the student's to fix
                return Result(
                    student,
                    status=f"unreadable submission ({type(err).__name__}: {err})"[:200],
                    seconds=time.monotonic() - start,
                )
        zip_copy = scratch / Path(autograder).name
        shutil.copy(autograder, zip_copy)
        results = scratch / "results"
        results.mkdir()  # otter run refuses an output folder that does not exist
        env = {
            k: v
            for k, v in os.environ.items()
            if k in ("PATH", "LANG", "LC_ALL", "VIRTUAL_ENV")
        }
        env.update(
            HOME=str(work),
            TMPDIR=str(work),
            MPLBACKEND="Agg",
            PYTHONDONTWRITEBYTECODE="1",
            MPLCONFIGDIR=str(work / ".matplotlib"),
            JUPYTER_RUNTIME_DIR=str(work / ".jupyter-runtime"),
            IPYTHONDIR=str(work / ".ipython"),
        )
        cmd = [
            python,
            "-m",
            "otter",
            "run",
            "-a",
            str(zip_copy),
            "-o",
            str(results),
            str(sub),
        ]
        prefix = isolation() if isolate else None
        if prefix is not None:
            script = scratch / "isolate.sh"
            script.write_text(ISOLATE)
            cmd = [*prefix, "--", "sh", str(script), str(scratch), *cmd]
        proc = subprocess.Popen(
            cmd,
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=_limits(timeout, memory_mb),
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.communicate()
            return Result(
                student,
                status=f"time limit ({timeout:g} s) exceeded",
                seconds=time.monotonic() - start,
            )
        finally:
            _kill(
                proc
            )  # whatever the submission left running in its group (a kernel, a child)
        text = out.decode("utf-8", "replace")
        path = results / "results.json"
        if not path.is_file():
            why = (
                "memory limit exceeded"
                if "MemoryError" in text or proc.returncode in (-9, 137)
                else f"grading failed (exit {proc.returncode})"
            )
            if keep is not None:
                (Path(keep) / f"{student}.log").write_text(text)
            return Result(student, status=why, seconds=time.monotonic() - start)
        data = json.loads(path.read_text())
        scores = {
            t["name"]: (float(t["score"]), float(t["max_score"]))
            for t in data.get("tests", [])
            if t.get("score") is not None and t.get("name") != "Public Tests"
        }
        if keep is not None:
            (Path(keep) / f"{student}.log").write_text(text)
            shutil.copy(path, Path(keep) / f"{student}.json")
        return Result(student, scores, "graded", time.monotonic() - start)
    finally:
        _make_removable(scratch)
        shutil.rmtree(scratch, ignore_errors=True)


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _make_removable(folder):
    for root, dirs, _ in os.walk(folder):
        for d in dirs:
            try:
                os.chmod(os.path.join(root, d), 0o700)
            except OSError:
                pass


def grade_class(
    subs,
    autograder_for,
    jobs=2,
    timeout=600,
    memory_mb=4096,
    keep=None,
    log=print,
    cell_timeout=120,
):
    """Grade ``subs`` (``{student: path}``) in parallel; ``autograder_for(student)`` gives the zip.

    Returns ``{student: Result}``.  A submission whose grading failed without hitting a limit is graded
    again, alone, after the others (another submission may have disturbed it).
    """

    def one(item):
        student, path = item
        res = grade_one(
            student,
            path,
            autograder_for(student),
            timeout,
            memory_mb,
            keep=keep,
            cell_timeout=cell_timeout,
        )
        log(f"{student}: {res.status}, {res.total:g} point(s) in {res.seconds:.0f} s")
        return res

    with ThreadPoolExecutor(max_workers=max(1, int(jobs))) as pool:
        results = {r.student: r for r in pool.map(one, subs.items())}
    for student, res in results.items():
        if res.status.startswith("grading failed"):
            log(f"{student}: grading again, alone")
            results[student] = one((student, subs[student]))
    return results


def questions_of(autograder):
    """``{question: max_points}`` of an autograder zip (its test files)."""
    import zipfile

    out = {}
    with zipfile.ZipFile(autograder) as zf:
        for name in zf.namelist():
            if name.startswith("tests/") and name.endswith(".py"):
                text = zf.read(name).decode()
                m = re.search(r"^points = (.+)$", text, flags=re.M)
                pts = (
                    ast.literal_eval(m.group(1)) if m else 1
                )  # a number or a list, written by otter assign
                out[Path(name).stem] = float(
                    sum(p for p in pts if p) if isinstance(pts, list) else pts
                )
    return out


def write_gradebook(results, questions, out, wide=False):
    """Write the gradebook CSV: long (student, question, points, max_points; a total row each) or wide."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    names = sorted(questions)
    possible = sum(questions.values())
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        if wide:
            w.writerow(["student", *names, "total", "max_points", "status"])
            for student in sorted(results):
                r = results[student]
                w.writerow(
                    [
                        student,
                        *(f"{r.scores.get(q, (0.0, 0))[0]:g}" for q in names),
                        f"{r.total:g}",
                        f"{possible:g}",
                        r.status,
                    ]
                )
            return out
        w.writerow(["student", "question", "points", "max_points", "status"])
        for student in sorted(results):
            r = results[student]
            for q in names:
                w.writerow(
                    [
                        student,
                        q,
                        f"{r.scores.get(q, (0.0, 0))[0]:g}",
                        f"{questions[q]:g}",
                        r.status,
                    ]
                )
            w.writerow([student, "total", f"{r.total:g}", f"{possible:g}", r.status])
    return out


def _one_zip(folder):
    zips = sorted(Path(folder).glob("*-autograder_*.zip"))
    if not zips:
        raise ValueError(f"no autograder zip in {folder}")
    return zips[-1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "autograder",
        help="the autograder zip (or, with --roster-dir, the chapter: 2, ch02)",
    )
    parser.add_argument(
        "submissions", type=Path, help="a folder of submissions (ID.ipynb or ID.zip)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("gradebook.csv"),
        help="the gradebook CSV (default: gradebook.csv)",
    )
    parser.add_argument(
        "--wide",
        action="store_true",
        help="one row per student, one column per question",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=max(1, (os.cpu_count() or 2) - 1),
        help="submissions graded at once",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600,
        help="seconds a submission may take (default 600)",
    )
    parser.add_argument(
        "--cell-timeout",
        type=float,
        default=120,
        help="seconds one cell may run (default 120)",
    )
    parser.add_argument(
        "--memory",
        type=int,
        default=4096,
        help="MB of address space a grading process may use (default 4096)",
    )
    parser.add_argument(
        "--roster-dir",
        type=Path,
        default=None,
        help="the students/ folder of tools/assignments.py --roster: each graded with their own variant",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep each submission's otter log and results here",
    )
    args = parser.parse_args(argv)
    for name in ("jobs", "timeout", "memory", "cell_timeout"):
        if getattr(args, name) <= 0:
            parser.error(
                f"--{name.replace('_', '-')} must be > 0, got {getattr(args, name)}"
            )
    try:
        subs = submissions(args.submissions)
        if args.roster_dir is None:
            zip_path = Path(args.autograder)
            if not zip_path.is_file():
                raise ValueError(f"autograder {args.autograder!r}: no such file")
            autograder_for = lambda student: zip_path  # noqa: E731
            questions = questions_of(zip_path)
        else:
            m = re.fullmatch(r"(?:ch)?0*(\d+)", args.autograder)
            if not m:
                raise ValueError(
                    f"with --roster-dir, name the chapter (2, ch02), got {args.autograder!r}"
                )
            ch = f"ch{int(m.group(1)):02d}"
            missing = [
                s
                for s in subs
                if not (args.roster_dir / s / ch / "dist" / "autograder").is_dir()
            ]
            if missing:
                raise ValueError(
                    f"no variant of {ch} in {args.roster_dir} for: {', '.join(missing)}"
                )
            autograder_for = lambda student: _one_zip(
                args.roster_dir / student / ch / "dist" / "autograder"
            )  # noqa: E731
            questions = questions_of(autograder_for(next(iter(subs))))
    except ValueError as err:
        parser.error(str(err))
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    confined = (
        "each confined to its scratch folder (read-only file systems elsewhere)"
        if isolation()
        else "NOT confined: this system cannot make the file systems read-only for it, so the students' code "
        "runs as you (use otter grade with Docker for untrusted work)"
    )
    print(f"grading {len(subs)} submission(s), {args.jobs} at a time, {confined}")
    results = grade_class(
        subs,
        autograder_for,
        args.jobs,
        args.timeout,
        args.memory,
        args.keep,
        cell_timeout=args.cell_timeout,
    )
    write_gradebook(results, questions, args.out, wide=args.wide)
    failed = sorted(s for s, r in results.items() if r.status != "graded")
    print(
        f"{args.out}: {len(results)} student(s); not graded: {', '.join(failed) if failed else 'none'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
