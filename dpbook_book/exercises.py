"""The book's exercises, read from the chapters themselves: statements, solutions and numeric answers.

Each exercise's numeric answer has one home: the code of its solution in the chapter.  The solution
ends with a call to :func:`answer`, which names the exercise, passes the value the solution computed
(a number or a few numbers, in the order the statement asks for) and says how close a student's
value must be::

    answer("ch99-ex-demo", [b, sd], rel_tol=5e-3, expects=("the scale b", "the sd of the release"))

When the chapter runs, the call only records the value.  Everything else reads the answer from
there, by running the solution's code again with the chapter's set-up cells (the code cells tagged
``exercise-setup``): the answer checker :func:`dpbook_book.classroom.check`, the autograded
assignments written by ``tools/assignments.py`` and the book's tests.  No answer is stored anywhere
else, neither as a number nor as a formula.

Chapter writers: give every exercise whose answer is a number or a few numbers such a call at the
end of its solution's code (its keyword arguments are those of :class:`Answer`); tag with
``exercise-setup`` the chapter's import cell and any cheap cell whose names a solution uses.  The
tolerance is what the exercise asks for: ``rel_tol=5e-3`` (three significant digits) by default,
tighter (``1e-3``) where a coarser answer would be a different one (an integer, a value next to its
limit); an answer that may be zero needs ``abs_tol``.  ``expects`` names what to submit, one short
name per entry, never the value.

**Variants.**  An exercise's numeric parameters (its n, ε, bounds, true value ...) are declared
once, at the top of its solution's code, with :func:`variant` and :func:`vary`::

    n, eps = variant("ch99-ex-demo",
                     n=vary(400, among=(200, 800, 1000), text="n = {}"),
                     eps=vary(1.0, among=(0.5, 2.0), text=r"\\varepsilon = {}"))

In the book the call returns the canonical values (the first argument of each :func:`vary`), so
the chapter prints what it always printed.  ``tools/assignments.py --variant SEED`` recomputes the
answers with :func:`compute` ``(label, variant=SEED)``, in which the call returns values drawn from
``among`` (never the canonical one), and writes the statement with them: each ``text`` is a
template whose canonical form (``"n = 400"``) the statement must contain, replaced by its drawn
form.  A value may be a tuple of numbers (drawn together, e.g. three budgets).  The solution's
other numbers (its ``expects``, its checks) must follow the names, not repeat the canonical values.
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "Answer",
    "Exercise",
    "SETUP_TAG",
    "STUDENT_EDITION",
    "Vary",
    "answer",
    "book_exercises",
    "chapter_exercises",
    "chapter_notebooks",
    "compute",
    "draw",
    "find_book",
    "parameters",
    "setup_cells",
    "variable_name",
    "variant",
    "vary",
]

#: the tag of the code cells that run before a solution when its answer is recomputed
SETUP_TAG = "exercise-setup"

#: the opening line of a MyST directive: a fence of 3+ backticks or colons, then ``{name}`` and its argument
OPEN = re.compile(
    r"^\s*(?P<fence>`{3,}|:{3,})\{(?P<name>[A-Za-z0-9_:-]+)\}\s*(?P<arg>.*?)\s*$"
)


def closes(line, fence):
    """Whether ``line`` closes a directive opened with ``fence`` (the same character, at least as long)."""
    s = line.strip()
    return len(s) >= len(fence) and set(s) == {fence[0]}


def directive_end(lines, i, fence):
    """Index just past the closing fence of the directive opened at ``lines[i]`` with ``fence``."""
    for j in range(i + 1, len(lines)):
        if closes(lines[j], fence):
            return j + 1
    return len(lines)


def solution_step(lines, i):
    """Inside a gated solution (``{solution-start}`` ... ``{solution-end}``), at ``lines[i]``:
    ``(still inside, index of the next line to read)``."""
    m = OPEN.match(lines[i])
    if m and m["name"] == "solution-end":
        return False, directive_end(lines, i, m["fence"])
    return True, i + 1


@dataclass(frozen=True)
class Answer:
    """The numeric answer of an exercise, as its solution computed it, and its tolerance.

    Attributes
    ----------
    label : str
        The exercise's label.
    values : tuple of float
        The answer's entries, in the order the statement asks for.
    rel_tol, abs_tol : float
        A value ``v`` counts as right for the entry ``a`` when ``|v - a| <= max(rel_tol * |a|, abs_tol)``.
    expects : str or tuple of str
        What to submit, in words; a tuple names each entry, in order.  Never the value.
    """

    label: str
    values: tuple
    rel_tol: float = 5e-3
    abs_tol: float = 0.0
    expects: str | tuple = "a number"

    def __repr__(self):  # the value is kept out of reprs, tracebacks and help()
        return f"Answer({self.label!r}, {len(self.values)} number(s), rel_tol={self.rel_tol:g}, abs_tol={self.abs_tol:g})"  # noqa: E501

    def describe(self):
        """What to submit, as one string."""
        if isinstance(self.expects, tuple):
            return ", then ".join(self.expects)
        return self.expects

    def entry(self, i):
        """How a verdict names entry ``i`` (from 0)."""
        name = f"entry {i + 1}"
        if isinstance(self.expects, tuple) and len(self.expects) == len(self.values):
            name += f" ({self.expects[i]})"
        return name

    def tolerance(self):
        """The tolerance in words, e.g. ``'0.1% (relative)'``."""
        parts = []
        if self.rel_tol > 0:
            parts.append(f"{100 * self.rel_tol:g}% (relative)")
        if self.abs_tol > 0:
            parts.append(f"{self.abs_tol:g} (absolute)")
        return " or ".join(parts)


#: answers recorded by :func:`answer` in this session: label -> Answer
_RECORDED: dict = {}


def make_answer(label, value, rel_tol=5e-3, abs_tol=0.0, expects="a number"):
    """An :class:`Answer` from a solution's value, with every argument validated."""
    if not isinstance(label, str) or not label:
        raise ValueError(f"label must be a non-empty string, got {label!r}")
    try:
        arr = np.asarray(value, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(
            f"value of {label} must be a number or a sequence of numbers, got {type(value).__name__}"
        ) from None
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(
            f"value of {label} must hold finite numbers ({arr.size} given)"
        )
    for name, tol in (("rel_tol", rel_tol), ("abs_tol", abs_tol)):
        if not (
            isinstance(tol, (int, float))
            and not isinstance(tol, bool)
            and math.isfinite(tol)
            and tol >= 0
        ):
            raise ValueError(f"{name} must be a finite number >= 0, got {tol!r}")
    if rel_tol == 0 and abs_tol == 0:
        raise ValueError(f"rel_tol and abs_tol cannot both be 0 for {label!r}")
    if rel_tol == 0 or np.any(arr == 0):
        if abs_tol == 0:
            raise ValueError(f"an answer of {label} is 0: give it an abs_tol > 0")
    if isinstance(expects, (list, tuple)):
        expects = tuple(expects)
        if not expects or not all(isinstance(e, str) and e for e in expects):
            raise ValueError(
                f"expects must be a string or a sequence of non-empty strings, got {expects!r}"
            )
        if len(expects) not in (1, arr.size):
            raise ValueError(
                f"expects names {len(expects)} entries but the answer of {label} has {arr.size}"
            )
    elif not isinstance(expects, str) or not expects:
        raise ValueError(
            f"expects must be a string or a sequence of non-empty strings, got {expects!r}"
        )
    return Answer(
        label, tuple(float(x) for x in arr), float(rel_tol), float(abs_tol), expects
    )


def answer(label, value, *, rel_tol=5e-3, abs_tol=0.0, expects="a number"):
    """Record the numeric answer of exercise ``label`` as its solution computed it (shows nothing).

    Called once, at the end of a solution's code; see the module docstring.
    """
    _RECORDED[label] = make_answer(
        label, value, rel_tol=rel_tol, abs_tol=abs_tol, expects=expects
    )


# --- variants: an exercise's parameters, declared beside its solution ----------------------------------


def _numbers(name, value):
    """``value`` (a real number or a tuple of them) as a float or a tuple of floats."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(
                f"{name} must be a number or a non-empty tuple of numbers, got {value!r}"
            )
        return tuple(_numbers(name, v) for v in value)
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not math.isfinite(value)
    ):
        raise ValueError(
            f"{name} must be a finite real number or a tuple of them, got {value!r}"
        )
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


def _shape(value):
    return None if not isinstance(value, tuple) else tuple(_shape(v) for v in value)


def format_value(value):
    """A parameter's value as a statement writes it: ``400``, ``0.5``, ``0.1, 1, 3`` for a tuple."""
    if isinstance(value, tuple):
        return ", ".join(format_value(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Vary:
    """A numeric parameter of an exercise: its canonical value (the book's), the values a variant draws
    from, and where the statement writes it (see the module docstring)."""

    value: object
    among: tuple
    text: tuple = ()

    def canonical_text(self):
        return tuple(t.format(format_value(self.value)) for t in self.text)

    def drawn_text(self, value):
        return tuple(t.format(format_value(value)) for t in self.text)


def vary(value, *, among, text=()):
    """Declare a parameter: canonical ``value``, drawn from ``among`` in a variant; ``text`` is the template
    (or templates), with ``{}`` for the value, of the places the statement writes it."""
    value = _numbers("value", value)
    if not isinstance(among, (list, tuple)) or not among:
        raise ValueError(f"among must be a non-empty sequence of values, got {among!r}")
    among = tuple(_numbers("among", a) for a in among)
    if any(_shape(a) != _shape(value) for a in among):
        raise ValueError(
            f"every value of among must have the shape of {value!r}, got {among!r}"
        )
    among = tuple(dict.fromkeys(a for a in among if a != value))
    if not among:
        raise ValueError(f"among must hold a value other than the canonical {value!r}")
    text = (text,) if isinstance(text, str) else tuple(text)
    if not all(isinstance(t, str) and "{}" in t for t in text):
        raise ValueError(
            f"text must be a template holding '{{}}' (or a tuple of them), got {text!r}"
        )
    return Vary(value, among, text)


#: the variant being computed: None (the book's canonical values) or the seed of a variant
_SEED = None
#: the parameters declared by the solutions run in this session: label -> {name: (Vary, value used)}
_DECLARED: dict = {}


def draw(label, params, seed):
    """The values of the parameters ``params`` (``{name: Vary}``) of exercise ``label`` in variant ``seed``.

    The draw depends only on the seed, the label and the parameter's name, so a chapter's exercises
    vary independently and adding a parameter to one exercise leaves the others' draws alone.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    out = {}
    for name, p in params.items():
        rng = np.random.default_rng(
            [int(seed), zlib.crc32(label.encode()), zlib.crc32(name.encode())]
        )
        out[name] = p.among[int(rng.integers(len(p.among)))]
    return out


def variant(label, **params):
    """The values of exercise ``label``'s parameters, declared as ``name=vary(...)``, in keyword order.

    The canonical values in the book; the drawn ones while :func:`compute` runs the solution for a
    variant.  One parameter gives its value, several a tuple.
    """
    if not isinstance(label, str) or not label:
        raise ValueError(f"label must be a non-empty string, got {label!r}")
    if not params or not all(isinstance(p, Vary) for p in params.values()):
        raise ValueError(
            f"the parameters of {label} must be given as name=vary(...), got {sorted(params)}"
        )
    values = (
        {n: p.value for n, p in params.items()}
        if _SEED is None
        else draw(label, params, _SEED)
    )
    _DECLARED[label] = {n: (p, values[n]) for n, p in params.items()}
    out = tuple(values[n] for n in params)
    return out[0] if len(out) == 1 else out


# --- reading the chapters --------------------------------------------------------------------------


@dataclass(frozen=True)
class Exercise:
    """An exercise of a chapter, as written in its notebook.

    Attributes
    ----------
    label : str
    notebook : Path
    title : str
        The directive's argument (may be empty).
    statement : str
        The exercise's text (MyST), without the directive's options.
    solution : tuple of str
        The code cells of its solution, in order (empty for a solution in prose).
    numeric : bool
        Whether the solution's code ends by recording a numeric answer with :func:`answer`.
    prose : str
        The text (MyST) of its solution, without its code: what a grader of the written parts reads.
    """

    label: str
    notebook: Path
    title: str
    statement: str
    solution: tuple
    numeric: bool
    prose: str = ""

    @property
    def varies(self):
        """Whether the solution's code declares the exercise's parameters with ``variant(label, ...)``:
        what lets ``tools/assignments.py --variant`` give each term or student an answer of its own."""
        return _finds(
            self.solution, lambda tree: _labelled_call(tree, "variant", self.label)
        )


def _labelled_call(tree, name, label):
    """The first call ``name(label, ...)`` in a parsed solution, or None."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == name
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == label
        ):
            return node
    return None


def _answer_call(tree, label):
    """The ``answer(label, ...)`` statement of a parsed solution, or None."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and node.value is _labelled_call(
            node.value, "answer", label
        ):
            return node
    return None


def _python(code):
    """A code cell as Python: IPython magics and shell lines become ``pass`` (keeping the indentation)."""
    return "\n".join(
        ln[: len(ln) - len(ln.lstrip())] + "pass"
        if ln.lstrip().startswith(("%", "!"))
        else ln
        for ln in code.splitlines()
    )


def _finds(code_cells, find):
    """Whether ``find`` (a parsed cell -> node or None) finds its node in one of the code cells."""
    for code in code_cells:
        try:
            if find(ast.parse(_python(code))) is not None:
                return True
        except SyntaxError:
            continue
    return False


def _read(path):
    import json

    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def solution_events(source):
    """The solution boundaries a markdown cell's text holds, in order: ``["start", label]`` or ``["end"]``.

    The JupyterLite copies of the chapters (``_ext/dpbook_site/lite.py``) write the solutions' boundaries
    as words for the reader and keep these events in the cell's metadata (``dpbook.solutions``), so
    the checker finds each solution's code there too.
    """
    events = []
    for line in source.splitlines():
        m = OPEN.match(line)
        if m and m["name"] == "solution-start" and m["arg"]:
            events.append(["start", m["arg"].split()[0]])
        elif m and m["name"] == "solution-end":
            events.append(["end"])
    return events


def chapter_exercises(path):
    """The exercises of the notebook at ``path``, in order of appearance (a chapter or its lite copy)."""
    path = Path(path)
    nb = _read(path)
    found, solutions, order, prose = {}, {}, [], {}
    inside = None
    for cell in nb.get("cells", []):
        src = _source(cell)
        if cell.get("cell_type") == "code":
            if inside is not None:
                solutions[inside].append(src)
            continue
        if cell.get("cell_type") != "markdown":
            continue
        # a lite copy: the boundaries are in the metadata; those that close a solution come first in
        # the cell (the rest of the text is read outside it), those that open one after its text
        events = (
            cell.get("metadata", {}).get("dpbook", {}).get("solutions")
            if not solution_events(src)
            else None
        )
        if events:
            while events and events[0][0] == "end":
                inside, events = None, events[1:]
        lines = src.splitlines()
        i = 0
        while i < len(lines):
            if inside is not None:
                line = lines[i]
                still, i = solution_step(lines, i)
                if still:
                    prose.setdefault(inside, []).append(line)
                inside = inside if still else None
                continue
            m = OPEN.match(lines[i])
            if m and m["name"] == "exercise":
                end = directive_end(lines, i, m["fence"])
                body = lines[i + 1 : end - 1]
                options = {}
                while body and re.match(r"^:[A-Za-z_-]+:", body[0]):
                    key, _, val = body.pop(0)[1:].partition(":")
                    options[key] = val.strip()
                label = options.get("label")
                if label:
                    if label in found:
                        raise ValueError(
                            f"exercise label {label!r} is used twice in {path}"
                        )
                    found[label] = (m["arg"], "\n".join(body).strip("\n"))
                    order.append(label)
                i = end
                continue
            if m and m["name"] == "solution-start":
                inside = m["arg"].split()[0] if m["arg"] else None
                solutions.setdefault(inside, [])
                i = directive_end(lines, i, m["fence"])
                continue
            i += 1
        for event in events or ():
            inside = event[1] if event[0] == "start" else None
            if inside is not None:
                solutions.setdefault(inside, [])
    if inside is not None:
        raise ValueError(
            f"solution {inside!r} in {path} has a {{solution-start}} but no {{solution-end}}"
        )
    out = []
    for label in order:
        code = tuple(solutions.get(label, ()))
        title, statement = found[label]
        text = "\n".join(prose.get(label, ())).strip()
        out.append(
            Exercise(
                label,
                path,
                title,
                statement,
                code,
                _finds(code, lambda tree: _answer_call(tree, label)),
                re.sub(r"\n{3,}", "\n\n", text),
            )
        )
    return out


def find_book(book=None):
    """The folder of the book's chapter notebooks (the one holding ``part1/``).

    Looked for, in order: ``book``, the environment variable ``DPBOOK_BOOK_DIR``, the ``book/`` folder
    of the repository this package is installed from, then the current folder and its parents (each
    itself or its ``book/``), which finds the chapters in the site's JupyterLite lab.
    """
    tried = []
    candidates = []
    if book is not None:
        candidates.append(Path(book))
    elif os.environ.get("DPBOOK_BOOK_DIR"):
        candidates.append(Path(os.environ["DPBOOK_BOOK_DIR"]))
    else:
        candidates.append(Path(__file__).resolve().parents[1] / "book")
        here = Path.cwd().resolve()
        for folder in (here, *here.parents):
            candidates += [folder, folder / "book"]
    students = []
    for c in candidates:
        tried.append(str(c))
        if (c / "part1").is_dir() and any(c.glob("part*/*.ipynb")):
            if book is None and _student_edition(c):
                students.append(
                    str(c)
                )  # no solutions there: look further, e.g. the repository around it
                continue
            return c
    if book is not None:
        raise ValueError(
            f"book={book!r} holds no chapter notebooks (no part1/ with notebooks)"
        )
    hint = (
        f" ({', '.join(students)} is a student edition, which holds no solutions)"
        if students
        else ""
    )
    raise LookupError(
        "the book's chapter notebooks were not found (the answers are computed by their solutions)"
        + hint
        + "; set DPBOOK_BOOK_DIR to the book/ folder of a copy of the book. Tried: "
        + ", ".join(tried[:6])
    )


#: the notebook metadata key under which tools/student_edition.py marks its copies
STUDENT_EDITION = "student_edition"


def _student_edition(folder):
    """Whether the chapters under ``folder`` are a student edition (written without their solutions)."""
    for path in chapter_notebooks(folder):
        try:
            if _read(path).get("metadata", {}).get("dpbook", {}).get(STUDENT_EDITION):
                return True
        except (OSError, ValueError):
            continue
    return False


def chapter_notebooks(book):
    """The chapter notebooks of the book folder ``book`` (``part*/*.ipynb``), in order."""
    return sorted(
        p
        for p in Path(book).glob("part*/*.ipynb")
        if ".ipynb_checkpoints" not in p.parts
    )


def book_exercises(book=None):
    """Every exercise of the book, by label (in the order of the chapters)."""
    out = {}
    for path in chapter_notebooks(find_book(book)):
        for ex in chapter_exercises(path):
            if ex.label in out:
                raise ValueError(
                    f"exercise label {ex.label!r} is used in {out[ex.label].notebook} and {path}"
                )
            out[ex.label] = ex
    return out


def setup_cells(path):
    """The code cells of the notebook at ``path`` tagged :data:`SETUP_TAG`, in order."""
    return [
        _source(c)
        for c in _read(path).get("cells", [])
        if c.get("cell_type") == "code"
        and SETUP_TAG in c.get("metadata", {}).get("tags", [])
    ]


def variable_name(label):
    """The Python name a student's answer to exercise ``label`` is given, e.g. ``ch02_ex_scale``."""
    name = re.sub(r"\W", "_", label)
    return name if name.isidentifier() and not name[0].isdigit() else f"ex_{name}"


@contextlib.contextmanager
def _quiet():
    """Nothing a solution prints, displays or plots reaches the caller's output, and the figure style
    its set-up cells choose (``use_style()``) does not outlive it."""
    try:
        from IPython.utils.capture import capture_output
    except ImportError:  # pragma: no cover - IPython comes with the book's requirements
        capture = contextlib.nullcontext()
    else:
        capture = capture_output(display=True)
    plt, style = None, contextlib.nullcontext()
    try:
        import matplotlib
        import matplotlib.pyplot as plt

        before = set(plt.get_fignums())
        style = matplotlib.rc_context()
    except ImportError:  # pragma: no cover
        before = set()
    try:
        with (
            style,
            capture,
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
        ):
            yield
    finally:
        if plt is not None:
            for num in set(plt.get_fignums()) - before:
                plt.close(num)


_CACHE: dict = {}


def _run(label, book, seed):
    """Run exercise ``label``'s solution (variant ``seed``, None for the book's): ``(Answer, parameters)``."""
    global _SEED
    exercises = book_exercises(book)
    if label not in exercises:
        raise ValueError(
            f"label {label!r} is not an exercise of the book; known: {sorted(exercises)}"
        )
    ex = exercises[label]
    if not ex.numeric:
        numeric = sorted(k for k, e in exercises.items() if e.numeric)
        raise ValueError(
            f"exercise {label!r} has no numeric answer to check; those that do: {numeric}"
        )
    if seed is not None:
        draw(label, {}, seed)  # validates the seed
    key = (label, str(ex.notebook), ex.notebook.stat().st_mtime_ns, seed)
    if key not in _CACHE:
        _RECORDED.pop(label, None)
        _DECLARED.pop(label, None)
        ns = {"__name__": f"dpbook_exercise_{variable_name(label)}"}
        _SEED = None
        try:
            with _quiet():
                for code in setup_cells(ex.notebook):
                    exec(
                        compile(_python(code), f"<{ex.notebook.name}: set-up>", "exec"),
                        ns,
                    )
                _SEED = seed
                for code in ex.solution:
                    exec(
                        compile(
                            _python(code), f"<{ex.notebook.name}: {label}>", "exec"
                        ),
                        ns,
                    )
        finally:
            _SEED = None
        if label not in _RECORDED:
            raise ValueError(
                f"the solution of {label!r} ran without recording its answer"
            )
        _CACHE[key] = (_RECORDED.pop(label), _DECLARED.pop(label, {}))
    return _CACHE[key]


def compute(label, book=None, variant=None):
    """The :class:`Answer` of exercise ``label``, computed by running its solution's code.

    The chapter's ``exercise-setup`` cells run first, then the solution's code cells, in a fresh
    namespace; nothing they print or draw is shown.  With ``variant`` (a seed, an integer >= 0) the
    solution runs with the parameters it declares with :func:`variant` drawn for that seed (an
    exercise that declares none has the book's answer in every variant).  The result is kept for the
    session (until the notebook changes).
    """
    return _run(label, book, variant)[0]


def parameters(label, book=None, variant=None):
    """The parameters exercise ``label`` declares: ``{name: (Vary, value in this variant)}`` (empty if none)."""
    return dict(_run(label, book, variant)[1])
