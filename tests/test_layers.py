"""The package layers, read from the source with ``ast`` (no module is imported):

* ``kernels`` imports nothing of ours above it;
* ``engine`` imports only ``engine`` and ``kernels`` (it finds families and commands as
  plug-ins, never by name);
* a family ``scenes/<family>/`` imports only ``engine``, ``kernels`` and its own folder;
* ``evals`` imports ``engine``, ``kernels`` and ``evals``: families are found through the
  registry.

Every function also stays readable: at most 80 lines, and blocks nested at most 5 deep
(an ``elif`` is a sibling, not a level).

Imports made with ``engine.lazy.lazy_module("...")`` count like any other; those under
``if TYPE_CHECKING:`` (annotations only) do not run and do not count. No import
inside a function exists to break a cycle: with every import moved to the top of its
module, the graph of our modules stays acyclic.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "kernels", "scenes", "evals", "benchmarks")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


MODULES = _modules()


def _target(name: str) -> str | None:
    """The module of ours that ``name`` (a module, or a name inside one) refers to."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _parse(source: str) -> ast.Module:
    """``ast.parse``, tried once more when Python 3.11 raises its spurious "AST constructor
    recursion depth mismatch" SystemError: a known interpreter bug in processes with other
    threads (seen once in a full run, with Ray's threads alive in the same test process, on a
    module that parses everywhere else); the interpreter's state, not the source's."""
    try:
        return ast.parse(source)
    except SystemError as e:
        if "recursion depth mismatch" not in str(e):
            raise
        return ast.parse(source)


def _edges(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """``(imported module, line, inside a function)`` for every import of ours in ``path``."""
    tree = _parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    inner = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
             for n in ast.walk(f) if n is not f}
    typing_only = {id(n) for f in ast.walk(tree) if isinstance(f, ast.If) and "TYPE_CHECKING" in ast.unparse(f.test)
                   for n in ast.walk(f)}
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:                    # annotations only: not imported at run time
            continue
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "lazy_module"
              and node.args and isinstance(node.args[0], ast.Constant)):
            names = [node.args[0].value]
        for name in names:
            target = _target(name) if name.split(".")[0] in PACKAGES else None
            if target and target != module:
                out.append((target, node.lineno, id(node) in inner))
    return out


EDGES = {m: _edges(m, p) for m, p in MODULES.items()}


def _allowed(module: str, target: str) -> bool:
    top, tgt = module.split(".")[0], target.split(".")[0]
    if top == "kernels":
        return tgt == "kernels"
    if top == "engine":
        return tgt in ("engine", "kernels")
    if top == "scenes":
        family = module.split(".")[:2]
        return tgt in ("engine", "kernels") or target.split(".")[:2] == family
    if top == "evals":
        return tgt in ("engine", "kernels", "evals")
    return True                                        # benchmarks and tests may use anything


def test_the_graph_was_read():
    assert "scenes.kiva.views" in {t for t, _, _ in EDGES["scenes.kiva.library"]}    # a lazy import
    assert ("engine.outputs", True) in {(t, inner) for t, _, inner in EDGES["engine.cli"]}
    assert len(MODULES) > 80


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.startswith("benchmarks")))
def test_imports_follow_the_layers(module):
    bad = [f"{MODULES[module].relative_to(ROOT)}:{line} imports {target}" for target, line, _ in EDGES[module]
           if not _allowed(module, target)]
    assert not bad, "\n".join(bad)


def test_no_import_breaks_a_cycle():
    graph = {m: sorted({t for t, _, _ in edges}) for m, edges in EDGES.items()}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m):
        state[m] = 1
        path.append(m)
        for t in graph.get(m, []):
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(t):] + [t]))
            if t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


MAX_LINES, MAX_DEPTH = 80, 5
BLOCKS = (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)


def _depth(node, d=0) -> int:
    """How deep blocks nest inside ``node`` (functions and classes inside it not counted)."""
    best = d
    for field, value in ast.iter_fields(node):
        children = value if isinstance(value, list) else [value]
        for ch in children:
            if not isinstance(ch, ast.AST) or isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            elif_ = isinstance(node, ast.If) and field == "orelse" and len(children) == 1 and isinstance(ch, ast.If)
            best = max(best, _depth(ch, d if elif_ or not isinstance(ch, BLOCKS) else d + 1))
    return best


def _long_or_deep(source: str) -> list[str]:
    out = []
    for node in ast.walk(_parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines, depth = node.end_lineno - node.lineno + 1, _depth(node)
            if lines > MAX_LINES or depth > MAX_DEPTH:
                out.append(f"{node.name} (line {node.lineno}): {lines} lines, blocks {depth} deep")
    return out


def test_the_measure_counts_what_it_should():
    deep = "def f(x):\n" + "".join("    " * (k + 1) + f"for a{k} in x:\n" for k in range(6)) + "    " * 7 + "pass\n"
    chain = "def g(x):\n    if x:\n        pass\n" + "    elif x:\n        pass\n" * 9 + "    else:\n        pass\n"
    assert _long_or_deep(deep) == ["f (line 1): 8 lines, blocks 6 deep"] and _long_or_deep(chain) == []
    assert _long_or_deep("def h():\n" + "    x = 1\n" * 80) == ["h (line 1): 81 lines, blocks 0 deep"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_functions_stay_short_and_shallow(module):
    assert not _long_or_deep(MODULES[module].read_text()), _long_or_deep(MODULES[module].read_text())
