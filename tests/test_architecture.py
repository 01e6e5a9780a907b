"""The package's import graph: one direction, no circles (function-local and type-only imports included)."""

import ast
import io
import re
import tokenize
from pathlib import Path

import networkx as nx

import llama_index_pearl
from llama_index_pearl.text.words import identifier_words

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


def _map() -> list[tuple[str, str, str]]:
    """(step, folder, modules cell) of each row of docs/architecture.md's table, in pipeline order."""
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([^|]+?) \| `([^`|]+)` \| ([^|]+?) \|", doc, flags=re.MULTILINE)
    return [(step, folder.rstrip("/").removesuffix(".py"), modules) for step, folder, modules in rows]


def _folder_of(parts: tuple[str, ...], folders: set[str]) -> str | None:
    """The deepest folder of the map holding a module given by its path inside the package (``("retrieval",
    "search", "faiss_search")``): a sub-folder with a row of its own is a step of its own."""
    for n in range(len(parts), 0, -1):
        if "/".join(parts[:n]) in folders:
            return "/".join(parts[:n])
    return parts[0] if parts else None


def _step_of(module: str, folders: set[str]) -> str | None:
    """The folder (or top-level module) a module belongs to; ``None`` for the package's own ``__init__``."""
    return _folder_of(tuple(module.split(".")[1:]), folders)


def _path_folder(path: Path, folders: set[str]) -> str | None:
    """The folder of the map a file of the package belongs to."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return _folder_of(parts[:-1] if parts[-1] == "__init__" else parts, folders)


def test_the_package_has_no_import_cycles():
    cycles = list(nx.simple_cycles(import_graph()))
    assert cycles == [], f"import cycles: {sorted(cycles, key=len)[:5]}"


def test_the_folders_are_the_rows_of_the_map():
    on_disk = {
        p.name.removesuffix(".py") for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    sub_packages = {str(p.parent.relative_to(PACKAGE)) for p in PACKAGE.glob("*/*/__init__.py")}
    assert on_disk - {"__init__"} | sub_packages == {folder for _, folder, _ in _map()}


def test_a_sub_package_of_the_map_is_a_step_of_its_own():
    folders = {folder for _, folder, _ in _map()}
    assert _step_of("llama_index_pearl.retrieval.search.faiss_search", folders) == "retrieval/search"
    assert _step_of("llama_index_pearl.retrieval.answer", folders) == "retrieval/answer"
    assert _step_of("llama_index_pearl.retrieval.state", folders) == "retrieval"
    assert _step_of("llama_index_pearl.config", folders) == "config"


def test_the_answer_imports_the_search_and_the_search_never_the_answer():
    edges = import_graph().edges
    inside = [(a, b) for a, b in edges if a.startswith(f"{ROOT}.retrieval.") and b.startswith(f"{ROOT}.retrieval.")]
    upward = [f"{a} imports {b}" for a, b in inside if ".retrieval.search" in a and ".retrieval.answer" in b]
    assert upward == []
    assert any(".retrieval.answer" in a and ".retrieval.search" in b for a, b in inside)


def test_each_step_imports_only_from_the_steps_before_it():
    order = {folder: i for i, (_, folder, _) in enumerate(_map())}
    late = []
    for module, target in import_graph().edges:
        step, used = _step_of(module, set(order)), _step_of(target, set(order))
        if step is not None and used is not None and order[used] > order[step]:
            late.append(f"{module} imports {target}")
    assert late == []


def test_the_architecture_map_names_every_module_in_its_folder_row():
    cells = {folder: modules for _, folder, modules in _map()}
    unnamed = []
    for path in PACKAGE.rglob("*.py"):
        if path.stem in ("__init__", "__main__"):
            continue
        folder = _path_folder(path, set(cells))
        if not re.search(rf"[`(, ]{path.stem}[`,) ]", cells.get(folder, "")):
            unnamed.append(str(path.relative_to(PACKAGE)))
    assert unnamed == []


def test_every_module_docstring_names_the_step_of_its_folder():
    steps = {folder: step for step, folder, _ in _map()}
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent == PACKAGE and path.stem == "__init__":
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        found = re.search(r"Pipeline step: ([^(]+?) \(docs/architecture\.md\)", doc)
        folder = _path_folder(path, set(steps))
        if not found or found.group(1) != steps.get(folder):
            wrong.append(f"{path.relative_to(PACKAGE)}: {found.group(1) if found else None}")
    assert wrong == []


# Words the glossary (docs/architecture.md) retired, and the names they had in code: a join links two tables, a path
# of n tables has n - 1 joins (no "hop"); units, not "entries"; "source" is provenance, an input is an input (a SQL
# database declares foreign keys, a bad input is refused); a star references four tables, not "three or more"; a pool
# is the explicit or the implicit candidates, never tables indexed together (a corpus) or a thread pool (an executor).
OLD_WORDS = re.compile(
    r"\b\d?-?hops?\b|\d+hops?\b|two-hop|three-hop|multi-hop|joined entr|sub-entr|whole-table entr|table source\b"
    r"|SQL sources?\b|bad source\b|from its source\b|three or more"
    r"|\ba pool (of|that)\b|\ba pool's|\bone pool, as\b|\bevery pool\b",
    flags=re.IGNORECASE,
)
OLD_NAMES = {"TableSource", "generate_now", "QueryPlan", "TableHit", "Pooled", "Hit", "name_tokens"}
# the unit kind of the paper's appendix E keeps its name; a benchmark file's "hops" field is an external format
KEPT = re.compile(r"single[-_ ]hop|``hops`` field", flags=re.IGNORECASE)


def _prose_and_names(path: Path) -> tuple[list[str], list[str]]:
    """The docstrings and comments of a module, and every name it defines or uses."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    prose = [
        doc
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and (doc := ast.get_docstring(node))
    ]
    prose += [
        tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT
    ]
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    names += [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    names += [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    names += [a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in (*n.args, *n.kwonlyargs)]
    return prose, names


def _says_hop(name: str) -> bool:
    return bool({"hop", "hops"} & set(identifier_words(KEPT.sub("", name))))


def test_the_words_the_glossary_retired_are_gone_from_docstrings_comments_and_names():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        prose, names = _prose_and_names(path)
        where = path.relative_to(PACKAGE)
        found += [f"{where}: {m.group(0)!r}" for text in prose for m in OLD_WORDS.finditer(KEPT.sub("", text))]
        found += [f"{where}: name {name}" for name in set(names) if name in OLD_NAMES or _says_hop(name)]
    assert found == []


# A result node's metadata is read through the record (retrieval.answer.result_nodes.ResultMetadata):
# `result_metadata(hit)`, a name bound to one, a parameter annotated with it, or an element of a list of them; every
# key so read is declared.
RECORD_READER = "result_metadata"
KEY_READS = ("get", "pop", "setdefault")


def _holds_record(expr: ast.AST, records: set[str], record_lists: set[str]) -> bool:
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr == "copy":
            return _holds_record(func.value, records, record_lists)
        return isinstance(func, ast.Name) and func.id == RECORD_READER
    if isinstance(expr, ast.Name):
        return expr.id in records
    if isinstance(expr, ast.Subscript):  # one of a list of records
        return isinstance(expr.value, ast.Name) and expr.value.id in record_lists
    if isinstance(expr, ast.IfExp):
        return _holds_record(expr.body, records, record_lists) or _holds_record(expr.orelse, records, record_lists)
    return False


def _record_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names a module binds to a result's metadata record, and to lists of records (module-wide)."""
    records: set[str] = set()
    record_lists: set[str] = set()
    while True:
        known = len(records) + len(record_lists)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                names = {t.id for t in node.targets if isinstance(t, ast.Name)}
                if _holds_record(node.value, records, record_lists):
                    records |= names
                elif isinstance(node.value, ast.ListComp) and _holds_record(node.value.elt, records, record_lists):
                    record_lists |= names
            elif isinstance(node, ast.arg) and ast.unparse(node.annotation or ast.Pass()) == "ResultMetadata":
                records.add(node.arg)
            elif isinstance(node, ast.comprehension) and isinstance(node.target, ast.Name):
                records |= {node.target.id} if ast.unparse(node.iter) in record_lists else set()
        if len(records) + len(record_lists) == known:
            return records, record_lists


def undeclared_metadata_reads(source: str, declared: set[str]) -> list[str]:
    """Where a module reads a result's metadata around the record, or by a key the record does not declare."""
    tree = ast.parse(source)
    records, record_lists = _record_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "metadata" and ast.unparse(node).endswith(".node.metadata"):
            found.append(f"line {node.lineno}: .node.metadata, not {RECORD_READER}()")
        key = None
        if isinstance(node, ast.Subscript) and _holds_record(node.value, records, record_lists):
            key = node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in KEY_READS:
            key = node.args[0] if node.args and _holds_record(node.func.value, records, record_lists) else None
        if key is not None and not (isinstance(key, ast.Constant) and key.value in declared):
            found.append(f"line {node.lineno}: key {ast.unparse(key)}")
    return found


def _declared_result_keys() -> set[str]:
    from typing import get_type_hints

    from llama_index_pearl.retrieval.answer.result_nodes import ResultMetadata

    return set(get_type_hints(ResultMetadata))


def test_the_command_line_reads_a_results_metadata_through_the_record_by_declared_keys_only():
    declared = _declared_result_keys()
    found = []
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        found += [f"cli/{path.name} {where}" for where in undeclared_metadata_reads(path.read_text(), declared)]
    assert found == []


def test_the_record_check_finds_a_misspelt_key_a_computed_key_and_a_read_around_the_record():
    source = (
        "def f(hit, nodes, meta: ResultMetadata, key):\n"
        "    record = result_metadata(hit)\n"
        "    metas = [result_metadata(n) for n in nodes]\n"
        "    ok = record['table_id'], meta.get('in_set'), [m['set_tier'] for m in metas], metas[0]['route_twins']\n"
        "    return record['tabel_id'], meta.get('set_teir'), [m['cosin'] for m in metas], record[key]\n"
        "def g(hit):\n"
        "    return hit.node.metadata['table_id'], result_metadata(hit).copy()['in_sett']\n"
    )
    assert sorted(undeclared_metadata_reads(source, _declared_result_keys())) == [
        "line 5: key 'cosin'",
        "line 5: key 'set_teir'",
        "line 5: key 'tabel_id'",
        "line 5: key key",
        "line 7: .node.metadata, not result_metadata()",
        "line 7: key 'in_sett'",
    ]
