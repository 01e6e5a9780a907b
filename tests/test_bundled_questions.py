"""The bundled music database answers the docs' and the demo's questions: every table each one needs in the top 5.

Real MiniLM, default settings, the index ``pearl demo`` and the README's quick start build.
"""

from __future__ import annotations

import pytest

from llama_index_pearl import PearlTableIndex
from llama_index_pearl.cli.commands import DEMO_QUESTIONS, EXAMPLE_DATA

README_QUESTION = "Which venues hosted bands signed to Northwind Records?"
NEEDED = {
    README_QUESTION: {"labels", "albums", "artists", "concerts", "venues"},
    # the quick start's, and the pictures' of docs/concepts.md (docs/figures.py)
    "Which venues hosted concerts by Velvet Harbor?": {"artists", "concerts", "venues"},
    "What seat categories were sold for the Harbor Nights Tour in Toronto?": {
        "tickets",
        "concerts",
        "venues",
        "cities",
    },
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
