"""Shared fixtures: a fast deterministic embedding for unit tests, the real MiniLM for integration tests."""

from __future__ import annotations

import pandas as pd
import pytest
from embeddings import HashingEmbedding


@pytest.fixture
def hashing_embedding() -> HashingEmbedding:
    return HashingEmbedding()


@pytest.fixture(scope="session")
def minilm():
    from llama_index_pearl.text.models import default_embed_model

    return default_embed_model()


@pytest.fixture
def music_tables() -> dict[str, pd.DataFrame]:
    return {
        "singer": pd.DataFrame({"singer_id": [1, 2, 3], "name": ["Joe Sharp", "Ann Lee", "Rosa Park"]}),
        "concert": pd.DataFrame(
            {"concert_id": [10, 11], "singer_id": [2, 3], "stadium_id": [7, 8], "concert_name": ["Fest", "Gala"]}
        ),
        "stadium": pd.DataFrame({"stadium_id": [7, 8], "stadium_name": ["Wembley", "Maracana"], "capacity": [90, 78]}),
    }


@pytest.fixture
def built(music_tables, hashing_embedding, tmp_path):
    """The music tables indexed with the hashing encoder and persisted to ``tmp_path / "idx"``: (index, folder)."""
    from llama_index_pearl import PearlTableIndex

    index = PearlTableIndex.from_tables(music_tables, embed_model=hashing_embedding)
    index.persist(tmp_path / "idx")
    return index, tmp_path / "idx"
