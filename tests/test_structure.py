"""The repository's shape: the core library imports numpy and scipy only, never the book's support
package, and no module imports one that imports it back."""

import ast
import subprocess
import sys
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
    edges = {m: {d for d in ds if not m == d.rpartition(".")[0] or False} for m, ds in graph.items()}
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
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                if name.split(".")[0] not in allowed:
                    bad.setdefault(path.name, []).append(name)
    assert not bad, f"the core imports {bad}"


def test_import_dpbook_loads_no_book_or_plotting_package():
    code = "import sys, dpbook; print(sorted({m.split('.')[0] for m in sys.modules}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = set(ast.literal_eval(out.stdout))
    heavy = {"dpbook_book", "matplotlib", "ipywidgets", "IPython", "diffprivlib", "opendp", "sklearn", "pandas"}
    assert not loaded & heavy, f"import dpbook loads {sorted(loaded & heavy)}"


def test_the_core_never_imports_the_book_package():
    graph = import_graph()
    leaks = {m: sorted(d for d in ds if d.startswith("dpbook_book")) for m, ds in graph.items()
             if m.split(".")[0] == "dpbook"}
    assert not {m: d for m, d in leaks.items() if d}


def test_the_import_graph_has_no_cycle():
    cycles = _cycles(import_graph())
    assert not cycles, f"import cycles: {cycles}"


def test_the_cycle_check_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
