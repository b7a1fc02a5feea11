"""The repository's shape: the core library imports numpy and scipy only, never the book's support
package, and no module imports one that imports it back."""

import ast
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dpbook", "dpbook_book")


def _module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module, level, name, is_package):
    if level == 0:
        return name
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def import_graph():
    """``{module: {imported first-party modules}}`` for every module of both packages, from the source
    (imports inside functions count too: a cycle hidden in a function is still a cycle)."""
    modules = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            modules[_module_name(path)] = path
    graph = {}
    for mod, path in modules.items():
        is_package = path.name == "__init__.py"
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, node.level, node.module or "", is_package)
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                # the longest first-party module the name refers to
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    deps.add(t)
        graph[mod] = deps
    return graph


def _cycles(graph):
    # a package's __init__ importing its own submodules is how packages work, not a cycle
    edges = {
        m: {d for d in ds if not m == d.rpartition(".")[0] or False}
        for m, ds in graph.items()
    }
    for m, ds in edges.items():
        ds.discard(m)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def test_the_core_imports_only_numpy_scipy_and_the_standard_library():
    allowed = set(sys.stdlib_module_names) | {"dpbook", "numpy", "scipy"}
    bad = {}
    for path in sorted((ROOT / "dpbook").rglob("*.py")):
        if (
            "interop" in path.parts
        ):  # the optional adapters import their peer lazily (test below)
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for name in names:
                if name.split(".")[0] not in allowed:
                    bad.setdefault(path.name, []).append(name)
    assert not bad, f"the core imports {bad}"


def test_import_dpbook_loads_no_book_or_plotting_package():
    code = "import sys, dpbook; print(sorted({m.split('.')[0] for m in sys.modules}))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    loaded = set(ast.literal_eval(out.stdout))
    heavy = {
        "dpbook_book",
        "matplotlib",
        "ipywidgets",
        "IPython",
        "diffprivlib",
        "opendp",
        "sklearn",
        "pandas",
    }
    assert not loaded & heavy, f"import dpbook loads {sorted(loaded & heavy)}"


def test_the_core_never_imports_the_book_package():
    graph = import_graph()
    leaks = {
        m: sorted(d for d in ds if d.startswith("dpbook_book"))
        for m, ds in graph.items()
        if m.split(".")[0] == "dpbook"
    }
    assert not {m: d for m, d in leaks.items() if d}


def test_the_import_graph_has_no_cycle():
    cycles = _cycles(import_graph())
    assert not cycles, f"import cycles: {cycles}"


def test_the_cycle_check_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [
        ["a", "b", "c"]
    ]


# --- the layers of the core (see dpbook/__init__.py): arrows point down only -------------------------

#: the floor of each part of the core; a module may import modules on its own floor or below, and a family
#: (floor 4) no other part of floor 4 but the families
FLOORS = (
    ("dpbook._kernels", 1),
    ("dpbook.neighbours", 1),
    ("dpbook.consistency", 2),
    ("dpbook.law", 2),
    ("dpbook.mechanism", 2),
    ("dpbook.audit.description", 2),
    ("dpbook.audit", 3),
    ("dpbook.families", 4),
    ("dpbook.inference", 4),
    ("dpbook.design", 5),
    ("dpbook.histograms", 6),  # many counts: post-processings over families and design
    ("dpbook.interop", 8),  # optional adapters above the flat names they use
    ("dpbook", 7),
)


def floor(module):
    """The floor of a core module (the longest prefix of FLOORS that names it)."""
    for prefix, level in FLOORS:
        if module == prefix or module.startswith(prefix + "."):
            return level
    raise ValueError(f"{module} is on no floor of the core: add it to FLOORS")


def upward_imports(graph):
    """``[(module, imported)]`` for every import of the core that points up, or sideways between two rooms of
    floor 4 (the families never read intervals, nor intervals a family module)."""
    bad = []
    for mod, deps in sorted(graph.items()):
        if mod.split(".")[0] != "dpbook" or mod in (
            "dpbook",
            "dpbook._legacy",
            "dpbook._version",
        ):
            continue
        for dep in sorted(deps):
            if dep.split(".")[0] != "dpbook" or dep == "dpbook._version":
                continue
            up = floor(dep) > floor(mod)
            sideways = (
                floor(dep) == floor(mod) == 4 and mod.split(".")[1] != dep.split(".")[1]
            )
            if up or sideways:
                bad.append((mod, dep))
    return bad


def test_the_core_imports_point_down_its_floors():
    assert not upward_imports(import_graph())


def test_the_floor_check_sees_an_upward_import():
    graph = {
        "dpbook.families.laplace": {
            "dpbook.design.calibration",
            "dpbook._kernels.laplace",
        },
        "dpbook.inference.intervals": {"dpbook.families.clamping"},
    }
    assert upward_imports(graph) == [
        ("dpbook.families.laplace", "dpbook.design.calibration"),
        ("dpbook.inference.intervals", "dpbook.families.clamping"),
    ]


def private_imports(paths):
    """``[(file, module, names)]``: private names (``_x``) imported from a module none of whose parts is private."""
    bad = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom) and node.module
            ):  # (``from . import _mod`` imports a module)
                names = [
                    a.name
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
                parts = [p for p in (node.module or "").split(".") if p]
                if names and not any(p.startswith("_") for p in parts):
                    bad.append((path.name, node.module, names))
    return bad


def _package_files():
    return [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]


def test_private_names_are_imported_only_from_private_modules():
    assert not private_imports(_package_files())


def test_the_private_import_check_sees_one(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "from dpbook.families.clamping import _bit_moments\nfrom dpbook._kernels.laplace import _g\n"
    )
    assert private_imports([f]) == [
        ("m.py", "dpbook.families.clamping", ["_bit_moments"])
    ]


def local_imports(paths):
    """``[(file, line)]`` of imports inside functions (they hide the import graph; the peers' lazy imports in
    ``dpbook.interop`` are the one exception: the core must import without them)."""
    bad = []
    for path in paths:
        if "interop" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                bad += [
                    (path.name, n.lineno)
                    for n in ast.walk(fn)
                    if isinstance(n, (ast.Import, ast.ImportFrom))
                ]
    return bad


def test_the_core_has_no_function_local_import():
    assert not local_imports(sorted((ROOT / "dpbook").rglob("*.py")))


def hook_probes(paths):
    """``[(file, line)]`` of ``getattr``/``hasattr`` calls: a family's hooks are declared on :class:`dpbook.Mechanism`
    with their defaults, so nothing in the core needs to probe for one."""
    bad = []
    for path in paths:
        if (
            path.name == "_legacy.py"
        ):  # the deprecated module names, resolved by attribute
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
            ):
                bad.append((path.name, node.lineno))
    return bad


def test_nothing_in_the_core_probes_a_mechanism_for_a_hook():
    assert not hook_probes(sorted((ROOT / "dpbook").rglob("*.py")))


def test_the_probe_check_sees_one(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f(m):\n    return getattr(m, 'integer_valued', False)\n")
    assert hook_probes([f]) == [("m.py", 2)]


def _copies():
    """``(module, name, home)`` for each function of a loaded library module whose globals are not those
    of the module ``sys.modules`` holds under its home's name: a second copy of that module."""
    found = []
    for key, module in list(sys.modules.items()):
        if not key.startswith(PACKAGES) or not isinstance(module, types.ModuleType):
            continue
        for name, obj in vars(module).items():
            home = getattr(obj, "__globals__", {}).get("__name__", "")
            if home.startswith(PACKAGES):
                owner = sys.modules.get(home)
                if owner is None or vars(owner) is not obj.__globals__:
                    found.append((key, name, home))
    return found


def test_each_library_module_is_loaded_once():
    """A test that monkeypatches ``module.X`` reaches the library only if the library's functions read the
    globals of that same module object (the root conftest imports the library before pytest collects its
    doctests by path, which would load a module a second time)."""
    assert not _copies()
