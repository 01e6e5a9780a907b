"""The package's import graph: one direction, no circles (function-local and type-only imports included)."""

import ast
import re
from pathlib import Path

import networkx as nx

import llama_index_pearl

PACKAGE = Path(llama_index_pearl.__file__).parent
ROOT = "llama_index_pearl"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.AST, module: str, is_package: bool, modules: set[str]) -> list[str]:
    """What an import statement loads; a package's own __init__ only when a name is taken from it.

    (Importing a submodule runs its parent package first in any case; that is not an edge.)
    """
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = module.split(".")
        base = base[: len(base) - node.level + (1 if is_package else 0)]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names]


def import_graph() -> nx.DiGraph:
    """Edges module -> package module it imports, anywhere in its source."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            for target in _imported(node, module, path.name == "__init__.py", set(files)):
                if target in files and target != module and target != ROOT:
                    graph.add_edge(module, target)
    return graph


def test_the_package_has_no_import_cycles():
    cycles = list(nx.simple_cycles(import_graph()))
    assert cycles == [], f"import cycles: {sorted(cycles, key=len)[:5]}"


def test_the_pipeline_never_imports_the_cli_or_benchmark_tooling():
    graph = import_graph()
    for module in graph:
        if not module.startswith(f"{ROOT}.cli"):
            assert not any(t.startswith(f"{ROOT}.cli") for t in graph.successors(module)), module


def test_config_sits_below_generation_and_augmentation():
    below = nx.descendants(import_graph(), f"{ROOT}.config")
    assert not any(m.startswith((f"{ROOT}.generation", f"{ROOT}.augment", f"{ROOT}.build")) for m in below)


def test_the_architecture_map_names_every_module():
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    modules = {p.stem for p in PACKAGE.rglob("*.py") if p.stem not in ("__init__", "__main__")}
    assert sorted(m for m in modules if not re.search(rf"[`(, ]{m}[`,) ]", doc)) == []


def _map_rows() -> dict[str, str]:
    """Step name -> the modules cell of its row in docs/architecture.md."""
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|", doc, flags=re.MULTILINE)
    return {step.lower(): modules for step, modules in rows if step not in ("step", "---")}


def test_every_module_docstring_names_its_step_in_the_map():
    rows = _map_rows()
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        if path.stem in ("__init__", "__main__") and path.parent == PACKAGE:
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        found = re.search(r"Pipeline step: ([^(]+?) \(docs/architecture\.md\)", doc)
        step = found.group(1).lower() if found else None
        name = path.parent.name if path.stem in ("__init__", "__main__") else path.stem
        if step not in rows or not re.search(rf"[`(, /]{name}[`,) /]", rows[step]):
            wrong.append(f"{path.relative_to(PACKAGE)}: {step}")
    assert wrong == []
