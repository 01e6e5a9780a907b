"""A process that loads index folders under a memory bound and says how each load went: one JSON line each.

``python load_worker.py EXTRA_BYTES PRISTINE...``: loads and reads each pristine folder (so that everything a
load imports is imported), bounds its address space (``RLIMIT_AS``) to what it holds then plus ``EXTRA_BYTES``,
says ``{"ready": [answers of each pristine folder]}``, then for each folder path read from stdin loads it,
reads every file and queries it, and says ``{"answers": ...}``, ``{"error": message}`` (a ``ValueError``) or
``{"crash": "Type: message"}`` (anything else), with ``"outside"``: the files the load opened outside the
folder (Python's ``open`` audit events; what Python's imports read is code, not the folder's data).
"""

from __future__ import annotations

import json
import os
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from embeddings import HashingEmbedding
from folders import virtual_memory

from llama_index_pearl import PearlTableIndex

QUESTIONS = ["Wembley capacity", "singer concert"]
# where the code Python imports lives: the interpreter's, the environment's, this repository's
_CODE = tuple(str(Path(p).resolve()) + os.sep for p in {sys.prefix, sys.base_prefix, Path(__file__).parent.parent})
opened: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        opened.append(os.fsdecode(args[0]))


def _outside(folder: str) -> list[str]:
    """What was opened by an absolute path outside ``folder`` and outside Python's code; a bare name is the
    folder's (the loader opens the folder's files by name, relative to the folder it holds open)."""
    inside = str(Path(folder).resolve())
    paths = [os.path.abspath(p) for p in opened if os.path.isabs(p) or os.sep in p]
    return [p for p in paths if p != inside and not p.startswith((inside + os.sep, *_CODE))]


def load_everything(folder: str) -> list:
    """Load a folder and read every file of it (tables, units, BM25), then query it: what a service does."""
    loaded = PearlTableIndex.load(folder, embed_model=HashingEmbedding())
    list(loaded.tables.values())
    assert loaded.units
    answers = [
        [(n.node.metadata["table_id"], round(n.score, 5)) for n in loaded.as_retriever(similarity_top_k=3).retrieve(q)]
        for q in QUESTIONS
    ]
    loaded.join_paths  # noqa: B018 - the stored paths, parsed
    return answers


def main() -> None:
    extra, pristine = int(sys.argv[1]), sys.argv[2:]
    ready = [load_everything(folder) for folder in pristine]
    resource.setrlimit(resource.RLIMIT_AS, (virtual_memory() + extra, resource.getrlimit(resource.RLIMIT_AS)[1]))
    sys.addaudithook(_audit)
    print(json.dumps({"ready": ready}), flush=True)
    for line in sys.stdin:
        folder = line.strip()
        opened.clear()
        try:
            said = {"answers": load_everything(folder)}
        except ValueError as exc:
            said = {"error": str(exc)}
        except BaseException as exc:  # reported: the test fails on it
            said = {"crash": f"{type(exc).__name__}: {exc}"[:2000]}
        said["outside"] = _outside(folder)
        print(json.dumps(said), flush=True)


if __name__ == "__main__":
    main()
