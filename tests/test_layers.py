"""mxc's layering, checked from the source text.

Every ``.py`` under mxc/ is read with ``ast`` (imports inside functions included, relative imports
resolved, and the by-name forms ``importlib.import_module("mxc...")`` and
``sys.modules["mxc..."]``); every ``.pyx``/``.pxd``/``.pxi`` is read line by line for ``cimport``
and ``import``. Each mxc module sits in one layer of ``LAYERS``; an import that reaches a higher
layer fails the test, naming file, line and both layers. Packages (the first name under mxc) must
also import each other without a circle. Only the start-up-time lazy imports in ``LAZY_ALLOWED``
may climb, each for the reason given there.

Run ``python tests/test_layers.py`` for the full list of imports (function-level ones marked).
"""
import ast
import os
import re
import sys

import pytest

# The source tree: beside the tests, or where tools/run_tests.sh says it copied them from (it runs
# a copy of tests/ against the installed package, which holds no .pyx files)
ROOT = os.path.join(os.environ.get("MXC_SOURCE_TREE")
                    or os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), "mxc")

# Where everything sits: lower numbers are lower layers; an import may only reach its own layer
# or a lower one. The longest matching module prefix decides (mxc.numpy before mxc).
LAYERS = {
    # 0 base: errors, attribute parsing helpers, Context, names; nothing of mxc below it
    "mxc.base": 0, "mxc.context": 0, "mxc.name": 0, "mxc.attribute": 0, "mxc.util": 0,
    # 1 _core: storage, engine, handles (chunks, views, kernel pushes), the tape, BLAS, CUDA
    "mxc._core": 1, "mxc.engine": 1, "mxc.runtime": 1,
    # 2 ops: the operator registry, every OpDef and its CPU/GPU kernels
    "mxc.ops": 2,
    # 3 the imperative arrays and autograd (which records ops on the tape)
    "mxc.ndarray": 3, "mxc.autograd": 3, "mxc.random": 3,
    # 4 graphs: Symbol and its executors (bind, CachedOp, graph passes)
    "mxc.symbol": 4, "mxc.executor": 4,
    # 5 fronts built on arrays and graphs
    "mxc.gluon": 5, "mxc.module": 5, "mxc.optimizer": 5, "mxc.kvstore": 5, "mxc.io": 5,
    "mxc.image": 5, "mxc.recordio": 5, "mxc.numpy": 5, "mxc.numpy_extension": 5,
    "mxc.contrib": 5, "mxc.rnn": 5, "mxc.initializer": 5, "mxc.lr_scheduler": 5,
    "mxc.metric": 5, "mxc.callback": 5, "mxc.model": 5, "mxc.monitor": 5, "mxc.operator": 5,
    "mxc.tools": 5, "mxc.onnx": 5, "mxc.visualization": 5, "mxc.profiler": 5,
    "mxc.feedforward": 5, "mxc.registry": 5, "mxc.rtc": 5,
    # 6 the package face: mxc/__init__.py, and the test helpers that hand out the whole package
    # (``from mxnet.test_utils import *`` brings ``mx``, as MXNet's)
    "mxc": 6, "mxc.test_utils": 6,
    # `import mxnet` (mxc-alias): the alias hands out the whole package, and the command that
    # installs it writes that package
    "mxc.mxnet_alias": 6, "mxc.tools.alias": 6,
}
LAYER_NAMES = {0: "base", 1: "_core", 2: "ops", 3: "ndarray/autograd", 4: "symbol/executor",
               5: "fronts", 6: "package face"}

# (importing module, imported module prefix) -> why the import may climb. Only imports kept lazy
# to protect `import mxc` time belong here.
LAZY_ALLOWED = {
    ("mxc.ndarray.ndarray", "mxc.numpy"):
        "NDArray.as_np_ndarray makes an mx.np array; mx.np (0.1 s of imports) loads on first use",
}


def _module_name(path):
    rel = os.path.relpath(path, os.path.dirname(ROOT))
    parts = os.path.splitext(rel)[0].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_package(path):
    return os.path.basename(path).startswith("__init__.")


def _sources():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(filenames):
            if f.endswith((".py", ".pyx", ".pxd", ".pxi")):
                yield os.path.join(dirpath, f)


def _known_modules():
    names = set()
    for path in _sources():
        names.add(_module_name(path))
    return names


def _resolve(module, is_pkg, level, name):
    """Absolute name of a (possibly relative) import made from `module`."""
    if level == 0:
        return name
    base = module.split(".")
    if not is_pkg:
        base = base[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _fstring_prefix(node, module):
    """The constant leading part of an f-string naming a module, with {__name__} filled in."""
    out = []
    for v in node.values:
        if isinstance(v, ast.Constant):
            out.append(v.value)
        elif (isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name)
              and v.value.id == "__name__"):
            out.append(module)
        else:
            break
    text = "".join(out)
    return text.rsplit(".", 1)[0] if not text.endswith(".") else text[:-1]


def _const_module(node, module):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return _fstring_prefix(node, module)
    return None


class _Visitor(ast.NodeVisitor):
    def __init__(self, module, is_pkg, known):
        self.module, self.is_pkg, self.known = module, is_pkg, known
        self.depth = 0
        self.found = []  # (line, target, in_function)

    def _add(self, node, target):
        if target and (target == "mxc" or target.startswith("mxc.")):
            self.found.append((node.lineno, target, self.depth > 0))

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_Import(self, node):
        for a in node.names:
            self._add(node, a.name)

    def visit_ImportFrom(self, node):
        base = _resolve(self.module, self.is_pkg, node.level, node.module or "")
        for a in node.names:
            sub = f"{base}.{a.name}"
            self._add(node, sub if sub in self.known else base)

    def visit_Call(self, node):
        f = node.func
        if node.args and isinstance(f, ast.Attribute) and (
                f.attr == "import_module" or
                (f.attr == "get" and isinstance(f.value, ast.Attribute)
                 and f.value.attr == "modules")):
            self._add(node, _const_module(node.args[0], self.module))
        elif node.args and isinstance(f, ast.Name) and f.id == "__import__":
            self._add(node, _const_module(node.args[0], self.module))
        self.generic_visit(node)

    def visit_Subscript(self, node):
        v = node.value
        if isinstance(v, ast.Attribute) and v.attr == "modules" and \
                isinstance(v.value, ast.Name) and v.value.id == "sys":
            self._add(node, _const_module(node.slice, self.module))
        self.generic_visit(node)


_CY_IMPORT = re.compile(r"^\s*(?:from\s+(\.*)([\w.]*)\s+c?import\s+(.+)|c?import\s+([\w.]+))")


def _cython_imports(path, module, known):
    is_pkg = _is_package(path)
    out = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            m = _CY_IMPORT.match(line)
            if not m:
                continue
            if m.group(4):
                targets = [m.group(4)]
            else:
                base = _resolve(module, is_pkg, len(m.group(1)), m.group(2))
                names = [n.strip().split(" ")[0] for n in m.group(3).strip("()\\ ").split(",")]
                targets = [f"{base}.{n}" if f"{base}.{n}" in known else base for n in names if n]
            indented = line[:1].isspace()    # inside a def (or a cdef class, if or try)
            out += [(lineno, t, indented) for t in targets if t == "mxc" or t.startswith("mxc.")]
    return out


def collect_imports():
    """[(path, line, importer, target, in_function)] for every mxc import under mxc/."""
    known = _known_modules()
    rows = []
    for path in _sources():
        module = _module_name(path)
        if path.endswith(".py"):
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            v = _Visitor(module, _is_package(path), known)
            v.visit(tree)
            found = v.found
        else:
            found = _cython_imports(path, module, known)
        rows += [(path, line, module, target, fn) for line, target, fn in found]
    return rows


def layer_of(module):
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        key = ".".join(parts[:n])
        if key in LAYERS:
            return LAYERS[key]
    raise KeyError(module)


def package_of(module):
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _allowed(importer, target):
    return any(importer == a and (target == b or target.startswith(b + "."))
               for a, b in LAZY_ALLOWED)


def climbing(rows):
    out = []
    for path, line, importer, target, fn in rows:
        lo, hi = layer_of(importer), layer_of(target)
        if hi > lo and not _allowed(importer, target):
            out.append((path, line, importer, target, fn, lo, hi))
    return out


def package_cycles(rows):
    """Strongly connected groups (more than one package) of the package import graph."""
    graph = {}
    for _, _, importer, target, _ in rows:
        a, b = package_of(importer), package_of(target)
        if a != b and a != "mxc" and b != "mxc" and not _allowed(importer, target):
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set())
    index, low, stack, on, out = {}, {}, [], set(), []

    def strong(v):  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out, graph


def _describe(c):
    path, line, importer, target, fn, lo, hi = c
    where = "inside a function" if fn else "at module level"
    return (f"{os.path.relpath(path, os.path.dirname(ROOT))}:{line}: {importer} "
            f"({LAYER_NAMES[lo]}) imports {target} ({LAYER_NAMES[hi]}) {where}")


@pytest.fixture(scope="module")
def rows():
    if not os.path.isdir(ROOT):
        pytest.skip(f"no mxc source tree at {ROOT} (set MXC_SOURCE_TREE to the checkout)")
    return collect_imports()


def test_the_whole_tree_is_read(rows):
    """Guards against a vacuous pass: imports from both kinds of source are seen."""
    seen = {os.path.relpath(r[0], ROOT).replace(os.sep, "/") for r in rows}
    assert {"ops/registry.py", "_core/handle.pyx", "ndarray/ndarray.py", "_core/handle.pxd"} <= seen
    assert len(rows) > 1000


def test_every_module_has_a_layer(rows):
    missing = sorted({m for _, _, imp, tgt, _ in rows for m in (imp, tgt) if _safe_layer(m) is None})
    assert not missing, f"modules without a layer in LAYERS: {missing}"


def _safe_layer(m):
    try:
        return layer_of(m)
    except KeyError:
        return None


def test_no_import_climbs_a_layer(rows):
    bad = climbing(rows)
    assert not bad, "imports that reach a higher layer:\n" + "\n".join(map(_describe, bad))


def test_no_import_circle_between_packages(rows):
    cycles, graph = package_cycles(rows)
    lines = []
    for group in cycles:
        edges = [f"{a} -> {b}" for a in group for b in sorted(graph[a]) if b in group]
        lines.append(", ".join(group) + "\n    " + "\n    ".join(edges))
    assert not cycles, "packages that import each other in a circle:\n" + "\n".join(lines)


def test_allowlist_is_used(rows):
    used = {(a, b) for _, _, imp, tgt, _ in rows for a, b in LAZY_ALLOWED
            if imp == a and (tgt == b or tgt.startswith(b + "."))}
    assert used == set(LAZY_ALLOWED), f"stale LAZY_ALLOWED entries: {set(LAZY_ALLOWED) - used}"


if __name__ == "__main__":
    found = collect_imports()
    fn = [r for r in found if r[4]]
    bad = climbing(found)
    cycles, _ = package_cycles(found)
    if "-v" in sys.argv:
        for r in fn:
            print(f"fn  {os.path.relpath(r[0], os.path.dirname(ROOT))}:{r[1]} -> {r[3]}")
    for c in bad:
        print("CLIMB", _describe(c))
    for group in cycles:
        print("CIRCLE", " ".join(group))
    print(f"{len(found)} imports, {len(fn)} inside functions, {len(bad)} climbing "
          f"({sum(1 for c in bad if c[4])} inside functions), {len(cycles)} circles")
