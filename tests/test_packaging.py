"""The package as a LlamaIndex integration: metadata, version, and optional extras that say what to install."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

import llama_index_pearl
from llama_index_pearl.cli import main
from llama_index_pearl.sources import read_table_file

tomllib = pytest.importorskip("tomllib")
ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_version_flag_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"pearl {llama_index_pearl.__version__}"


def test_llamahub_section_names_importable_classes():
    hub = PYPROJECT["tool"]["llamahub"]
    module = importlib.import_module(hub["import_path"])
    assert hub["class_authors"]
    for class_name in hub["class_authors"]:
        assert isinstance(getattr(module, class_name), type)


def test_license_file_is_the_mit_license_pyproject_declares():
    assert PYPROJECT["project"]["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def test_every_dependency_has_an_upper_bound():
    project = PYPROJECT["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    unbounded = [r for r in requirements if "<" not in r and not r.startswith("llama-index-pearl[")]
    assert unbounded == []


@pytest.mark.parametrize("optional", ["pyarrow", "qdrant-client", "sqlglot"])
def test_optional_packages_are_not_core_dependencies(optional):
    assert not any(r.startswith(optional) for r in PYPROJECT["project"]["dependencies"])


@pytest.mark.parametrize("core", ["bm25s", "llama-index-llms-openai-like"])
def test_lexical_scoring_and_the_llm_client_are_core_dependencies(core):
    # bm25s scores every retrieval (llama_index_pearl.lexical); OpenAILike is the product's LLM client
    assert any(r.startswith(core) for r in PYPROJECT["project"]["dependencies"])


def test_parquet_without_its_extra_names_the_extra_and_the_file(monkeypatch, tmp_path):
    path = tmp_path / "songs.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(path)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ValueError, match=r"songs\.parquet.*llama-index-pearl\[parquet\]"):
        read_table_file(path)


CORE_ONLY = """
import sys
BLOCKED = ("sqlglot", "pyarrow", "qdrant_client")  # the extras main keeps optional


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name in BLOCKED or name.startswith(tuple(b + "." for b in BLOCKED)):
            raise ImportError(f"{name} is not installed (blocked)")


sys.meta_path.insert(0, Blocker())
import pandas as pd
from embeddings import HashingEmbedding
import llama_index_pearl.cli
from llama_index_pearl import PearlTableIndex

tables = {"a": pd.DataFrame({"k": [1, 2], "x": ["p", "q"]}), "b": pd.DataFrame({"k": [1, 2], "y": ["r", "s"]})}
index = PearlTableIndex.from_tables(tables, embed_model=HashingEmbedding())
print(index.as_retriever(similarity_top_k=1).retrieve("x p")[0].node.metadata["table_id"])
"""


def test_core_install_builds_and_retrieves_without_any_extra():
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    done = subprocess.run([sys.executable, "-c", CORE_ONLY], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() in {"a", "b"}
