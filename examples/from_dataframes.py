"""The smallest PEARL app: three DataFrames in, join-aware table retrieval out.

python examples/from_dataframes.py
"""

import pandas as pd

from llama_index_pearl import PearlTableIndex

tables = {
    "singer": pd.DataFrame({"singer_id": [1, 2, 3], "name": ["Joe Sharp", "Ann Lee", "Rosa Park"]}),
    "concert": pd.DataFrame({"concert_id": [10, 11, 12], "singer_id": [1, 2, 3], "stadium_id": [7, 8, 7]}),
    "stadium": pd.DataFrame(
        {"stadium_id": [7, 8], "stadium_name": ["Wembley", "Maracana"], "capacity": [90000, 78000]}
    ),
}

index = PearlTableIndex.from_tables(tables)  # bundled MiniLM encoder, heuristic questions: no LLM, no network
for hit in index.as_retriever(similarity_top_k=3).retrieve("Which stadium did Ann Lee perform in?"):
    print(f"{hit.node.metadata['table_id']:<8} {hit.score:.3f}  via {hit.node.metadata['matched_kind']} unit")
