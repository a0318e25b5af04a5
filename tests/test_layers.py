"""The package's layers import one way (issue 10, "The shape of the code").

Read from the source with :mod:`ast`, every import counts, also those inside
functions (a lazy import is still a dependency) and ``importlib.import_module`` of a
module named in full: nothing outside the command line
imports it, the module graph has no cycle, and a module imports only modules of
its own layer or below:

    dice/rules (and the plain statistics) < engine (with the strategy interface)
    < exact/runner < strategies < public API < report/verify < command line

Packages are held to the same: the graph of top-level packages (every module of
``exact`` counted as ``exact``, importing a module counted as importing its package,
whose ``__init__`` runs) has no cycle, and no module imports a private name (or a
private module) of another top-level package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import yahtzee_sim

PACKAGE = "yahtzee_sim"
PACKAGE_DIR = Path(yahtzee_sim.__file__).parent

# Layer of each module, by the longest matching dotted prefix (relative to the package).
# A new module must be placed here: an unplaced module fails the test.
LAYERS = {
    # 0: the bottom: dice and rules as data, plain statistics and interval math, safe file writes
    "dice": 0, "patterns": 0, "rules": 0, "intervals": 0, "stats": 0, "files": 0, "validate": 0, "fmt": 0,
    "signing": 0,  # the user's key that signs checkpoints and caches (hmac, stdlib)
    "limits": 0,    # memory and work limits checked before any table is built
    "progress": 0,  # the progress= callback protocol and its terminal display (stdlib; tqdm lazily)
    "forkpool": 0,  # the exact engine's forked helper processes: count, parent watch, errors, shutdown (stdlib)
    # 1: the engine: game state, the strategy interface and registry, the simulator, its result objects
    "state": 1, "strategy": 1, "engine": 1, "results": 1,
    "tableplay": 1,  # the engine's lean loop for strategies that decide by table lookup
    "tableplay_kernels": 1,  # its compiled twin (numba, imported lazily)
    # 2: the exact engine and the runners (chunks, backends, checkpoints)
    "runner": 2, "exact": 2,
    # 3: the strategies (plug-ins, several built on the exact engine) and tables of players
    "strategies": 3, "multiplayer": 3,
    # 4: the public API (simulate, simulate_turns; the package's __init__ re-exports it)
    "api": 4, "": 4, "benchmarking": 4, "checks": 4,  # the report card; the conformance checks users run
    "gym": 4,  # Gymnasium environments (imported by nothing in the package): exact engine, simulator and statistics together
    # 5: reports and the claims catalog
    "report": 5, "verify": 5,
    "questions": 5,  # a writer's questions and claims files (exact engine + simulation + verdicts)
    # 6: the command line (``python -m yahtzee_sim`` is its entry point): one module per command,
    # named after it (test_every_command_has_its_module), and _common, the pieces they share
    "cli": 6, "__main__": 6,
}
LAYER_NAMES = ["dice/rules", "engine", "exact/runner", "strategies", "api", "report/verify", "cli"]


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of ``package`` under ``root``."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports_of(files: dict[str, Path]):
    """Every import statement of every module, resolved: ``(module, source, names)`` where
    ``source`` is the absolute dotted module imported from and ``names`` the names taken from
    it (``None`` for a plain ``import source``). Relative imports are resolved here, once."""
    for mod, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield mod, alias.name, None
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_package else mod.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                yield mod, source, [a.name for a in node.names]
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
                  == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str) and not node.args[0].value.startswith(".")):
                # importlib.import_module("yahtzee_sim.x.y"): an import by another name (an old
                # address's forwarding, say) is a dependency all the same
                yield mod, node.args[0].value, None


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in the file, incl. in functions).

    ``from .x import name`` is an edge to the submodule ``x.name`` when that is a
    module, else to ``x`` itself (importing a name from a package runs its __init__).
    The implicit import of a module's parent packages is not counted (every
    module would otherwise depend on the package root).
    """
    files = module_files(root, package)

    def owner(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {mod: set() for mod in files}
    for mod, source, names in imports_of(files):
        if names is None:
            targets = [source]
        else:
            targets = [f"{source}.{n}" if f"{source}.{n}" in files else source for n in names]
        for target in targets:
            if target == package or target.startswith(package + "."):
                found = owner(target)
                if found and found != mod:
                    graph[mod].add(found)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layer_of(module: str) -> int | None:
    rel = module.removeprefix(PACKAGE).removeprefix(".")
    parts = rel.split(".") if rel else []
    for n in range(len(parts), -1, -1):
        key = ".".join(parts[:n])
        if key in LAYERS:
            return LAYERS[key]
    return None  # pragma: no cover - LAYERS has "" for the root


@pytest.fixture(scope="module")
def graph():
    return import_graph(PACKAGE_DIR.parent, PACKAGE)


def test_the_graph_sees_the_package(graph):
    """The checks below are only worth something if the graph is the real one."""
    assert len(graph) > 40
    assert f"{PACKAGE}.runner" in graph[f"{PACKAGE}.api"]
    assert f"{PACKAGE}.runner.driver" in graph[f"{PACKAGE}.runner"]
    assert f"{PACKAGE}.engine" in graph[f"{PACKAGE}.runner.plan"]
    # a function-level import is an edge: cli.simulate imports the API inside cmd_simulate
    assert f"{PACKAGE}.api" in graph[f"{PACKAGE}.cli.simulate"]


def cli_imports(graph: dict[str, set[str]], package: str) -> list[str]:
    """Imports of ``package.cli`` from modules outside it (``__main__`` is the CLI's entry point)."""
    cli = f"{package}.cli"

    def in_cli(m: str) -> bool:
        return m == cli or m.startswith(cli + ".")

    return sorted(f"{mod} imports {dep}" for mod, deps in graph.items()
                  if not in_cli(mod) and mod != f"{package}.__main__" for dep in deps if in_cli(dep))


def test_every_command_has_its_module():
    """The code of ``yahtzee-sim NAME`` is in cli/NAME.py (dashes as underscores), which
    registers that command and no other, so a reader finds a command from its name."""
    import argparse
    import importlib

    from yahtzee_sim.cli import COMMAND_MODULES

    registered = {}
    for name in COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"{PACKAGE}.cli.{name}").add_commands(sub)
        registered[name] = sorted(sub.choices)
    assert {name: [name.replace("_", "-")] for name in COMMAND_MODULES} == registered
    on_disk = {p.stem for p in (PACKAGE_DIR / "cli").glob("*.py")} - {"__init__", "_common"}
    assert on_disk == set(COMMAND_MODULES), "a module of cli/ that registers no command, or one not registered"


def test_nothing_imports_the_cli(graph):
    bad = cli_imports(graph, PACKAGE)
    assert not bad, "the library must not import the command line: " + "; ".join(bad)


def test_no_import_cycles(graph):
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_layers_import_downwards(graph):
    unplaced = sorted(m for m in graph if layer_of(m) is None)
    assert not unplaced
    bad = []
    for mod, deps in sorted(graph.items()):
        for dep in sorted(deps):
            if layer_of(dep) > layer_of(mod):
                bad.append(f"{mod} ({LAYER_NAMES[layer_of(mod)]}) imports {dep} ({LAYER_NAMES[layer_of(dep)]})")
    assert not bad, "imports against the layer order: " + "; ".join(bad)


def test_the_engine_knows_no_backend(graph):
    """The engine plays seed blocks; runners, checkpoints and progress are above it."""
    engine = graph[f"{PACKAGE}.engine"]
    assert not {d for d in engine if d.startswith((f"{PACKAGE}.runner", f"{PACKAGE}.api"))}
    for mod in (f"{PACKAGE}.results", *[m for m in graph if m.startswith(f"{PACKAGE}.stats")]):
        other = f"{PACKAGE}.stats" if mod == f"{PACKAGE}.results" else f"{PACKAGE}.results"
        assert not {d for d in graph[mod] if d == other or d.startswith(other + ".")}, mod


def test_the_checks_catch_a_cycle_and_a_cli_import(tmp_path):
    """A toy package with a lazy (function-level) circle and a library module importing its CLI."""
    pkg = tmp_path / "toy"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cli" / "__init__.py").write_text("import os\n")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import g\n    from toy.cli import main\n")
    toy = import_graph(tmp_path, "toy")
    assert toy["toy.b"] == {"toy.a", "toy.cli"}
    assert cycles(toy) == [["toy.a", "toy.b"]]
    assert cli_imports(toy, "toy") == ["toy.b imports toy.cli"]


# -- start-up: nothing heavy on the paths every command takes (issue 10) ---------------------

HEAVY = ("pandas", "scipy", "matplotlib", "tqdm", "dask", "pyarrow", "numba")

_PROBE = """
import json, sys
heavy = {heavy!r}
loaded = lambda: sorted(m for m in heavy if m in sys.modules)
import yahtzee_sim
after_import = loaded()
from yahtzee_sim.cli import build_parser
build_parser()
print(json.dumps({{"import": after_import, "parser": loaded(), "numpy": "numpy" in sys.modules}}))
"""


def _python_env() -> dict:
    import os

    return {**os.environ, "PYTHONPATH": str(PACKAGE_DIR.parent)}


def test_import_and_parser_load_no_heavy_library():
    """A property, not a timing: pandas, scipy, matplotlib, tqdm and dask load only when used."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _PROBE.format(heavy=HEAVY)], capture_output=True, text=True,
                         env=_python_env(), timeout=120, check=True).stdout
    seen = json.loads(out)
    assert seen["import"] == [], f"import yahtzee_sim loads {seen['import']}"
    assert seen["parser"] == [], f"building the CLI parser loads {seen['parser']}"
    assert seen["numpy"]  # the probe is real: the package itself did load


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["simulate", "--help"]])
def test_cli_help_and_version_load_no_heavy_library(argv):
    """The real command (``python -m yahtzee_sim``), read from ``-X importtime``'s list of modules."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", PACKAGE, *argv], capture_output=True,
                          text=True, env=_python_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert f"{PACKAGE}.cli" in modules
    assert not {m.split(".")[0] for m in modules} & set(HEAVY)


def test_naming_and_checking_patterns_loads_no_pandas():
    """A question's events are read by name (parsed, checked, refused with the valid names):
    that needs no pattern table, so no pandas (it was 0.17 s of every `ask` before)."""
    import subprocess
    import sys

    probe = ("import sys\nfrom yahtzee_sim.patterns import check_pattern, pattern_names\n"
             "from yahtzee_sim.questions.spec import parse_question\n"
             "names = pattern_names(); check_pattern('Full house')\n"
             "try:\n    check_pattern('yahtzee')\nexcept ValueError:\n    pass\n"
             "parse_question({'ask': 'chance', 'event': 'win', 'scope': 'table', 'players': ['optimal', 'greedy']})\n"
             "parse_question({'ask': 'chance', 'event': 'five_of_a_kind', 'scope': 'roll'})\n"
             "print(len(names), 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=_python_env(),
                         timeout=120, check=True).stdout.split()
    assert out == ["17", "False"]


# -- packages: the same one-way order one level up ----------------------------------------

def top_package(module: str, package: str = PACKAGE) -> str:
    """The top-level package (or root module) a module belongs to: ``exact`` for
    ``yahtzee_sim.exact.policy``, ``engine`` for ``yahtzee_sim.engine``, ``""`` for the root."""
    rel = module.removeprefix(package).removeprefix(".")
    return rel.split(".")[0]


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Top-level package -> the top-level packages its modules import. Importing any module
    of a package counts as importing the package (its ``__init__`` runs first), which is
    what closes a circle the module graph alone does not show."""
    out: dict[str, set[str]] = {}
    for mod, deps in graph.items():
        here = top_package(mod)
        out.setdefault(here, set()).update(top_package(d) for d in deps if top_package(d) != here)
    return out


def test_package_graph_sees_a_circle_through_a_package():
    """The check below is worth something: a circle that passes through two different
    modules of one package (a -> b.x, b.y -> a) is a package-level circle."""
    graph = {f"{PACKAGE}.a": {f"{PACKAGE}.b.x"}, f"{PACKAGE}.b.x": set(), f"{PACKAGE}.b.y": {f"{PACKAGE}.a"}}
    assert not cycles(graph)
    assert cycles(package_graph(graph)) == [["a", "b"]]


def test_no_package_cycles(graph):
    found = cycles(package_graph(graph))
    assert not found, "package import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def private_imports(root: Path, package: str) -> list[str]:
    """Imports of a private name, or a name from a private module, of another top-level
    package (``from ..exact._kernels import x`` outside ``exact``; ``from ..verify.x import _y``)."""
    files = module_files(root, package)
    bad = []

    def private(parts: list[str]) -> bool:
        return any(p.startswith("_") and not p.startswith("__") for p in parts)

    for mod, source, names in imports_of(files):
        for name in names or [None]:
            if not (source == package or source.startswith(package + ".")):
                continue
            full = f"{source}.{name}" if name else source
            target = full if full in files or name is None else source
            if top_package(target, package) == top_package(mod, package):
                continue
            parts = target.split(".")[1:] + ([name] if name and full not in files else [])
            if private(parts):
                bad.append(f"{mod} imports {'.'.join(parts)}")
    return sorted(bad)


def test_private_imports_are_seen(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "_inner.py").write_text("x = 1\n_y = 2\n")
    (pkg / "a" / "same.py").write_text("from ._inner import x, _y\n")          # its own package: fine
    (pkg / "b.py").write_text("from .a._inner import x\nfrom .a import same\nimport pkg.a._inner\n")
    assert private_imports(tmp_path, "pkg") == ["pkg.b imports a._inner", "pkg.b imports a._inner.x"]


def test_no_private_names_across_packages():
    bad = private_imports(PACKAGE_DIR.parent, PACKAGE)
    assert not bad, "private names imported across packages: " + "; ".join(bad)
