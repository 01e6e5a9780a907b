"""The bundled music database answers the docs' and the demo's questions: every table each one needs in the top 5.

Real MiniLM, default settings, the index ``pearl demo`` and the README's quick start build. The questions the
README, Getting started, the pictures of Concepts and ``pearl demo`` show off are held to more: the set's needed
tier is exactly the tables the question needs, nothing missing and nothing wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.cli.commands import DEMO_QUESTIONS, EXAMPLE_DATA

# the README's quick start (a label to venues, three bridges between)
README_QUESTION = "Which venues hosted bands signed to Lumen Sound?"
# the README's and Getting started's `pearl query`, and the answer-set picture of docs/concepts.md (docs/figures.py)
SET_QUESTION = "Which cities did artists from Finland play in?"
SHOWCASED = (README_QUESTION, SET_QUESTION, *DEMO_QUESTIONS)
NEEDED = {
    README_QUESTION: {"labels", "albums", "artists", "concerts", "venues"},
    SET_QUESTION: {"artists", "concerts", "venues", "cities"},
    "Which venues hosted bands signed to Northwind Records?": {"labels", "albums", "artists", "concerts", "venues"},
    # the pooling picture of docs/concepts.md (docs/figures.py) and the examples'
    "Which venues hosted concerts by Velvet Harbor?": {"artists", "concerts", "venues"},
    DEMO_QUESTIONS[0]: {"artists", "concerts", "venues", "cities"},
    DEMO_QUESTIONS[1]: {"songs", "albums", "artists", "labels"},
    DEMO_QUESTIONS[2]: {"tickets", "concerts", "venues"},
}


@pytest.fixture(scope="module")
def music_index(minilm) -> PearlTableIndex:
    return PearlTableIndex.from_tables(EXAMPLE_DATA, embed_model=minilm)


@pytest.mark.parametrize("question", sorted(NEEDED))
def test_every_table_the_question_needs_is_in_the_top_5(music_index, question):
    top = [hit.node.metadata["table_id"] for hit in music_index.as_retriever(similarity_top_k=5).retrieve(question)]
    assert NEEDED[question] <= set(top), f"missing {NEEDED[question] - set(top)} from {top}"


@pytest.mark.parametrize("question", sorted(set(SHOWCASED)))
def test_a_showcased_question_needs_exactly_the_tables_it_needs(music_index, question):
    hits = music_index.as_retriever(similarity_top_k=6).retrieve(question)
    needed = {hit.node.metadata["table_id"] for hit in hits if hit.node.metadata["set_tier"] == "needed"}
    assert needed == NEEDED[question], f"needed {sorted(needed)}, the question needs {sorted(NEEDED[question])}"


def test_the_pages_show_the_showcased_questions():
    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert f'retrieve("{README_QUESTION}")' in readme and f'pearl query idx "{SET_QUESTION}"' in readme
    started = (root / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert f'retrieve("{SET_QUESTION}")' in started and f'pearl query idx "{SET_QUESTION}"' in started
    assert f'SET_QUESTION = "{SET_QUESTION}"' in (root / "docs" / "figures.py").read_text(encoding="utf-8")
