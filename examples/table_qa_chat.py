"""Terminal chatbot over a folder of CSVs: PEARL retrieves the tables (and how they join), an LLM answers.

    python examples/table_qa_chat.py                                  # bundled music database, interactive
    python examples/table_qa_chat.py my_csvs/ --question "Which venues hosted Velvet Harbor?"
    printf 'q1\\nq2\\n' | python examples/table_qa_chat.py               # one question a line until EOF
    python examples/table_qa_chat.py --llm-base http://localhost:8000/v1 --llm-model qwen2.5-7b-instruct

Without ``--llm-base``/``--llm-model`` it runs offline (bundled MiniLM encoder, heuristic
questions at index time) and shows, per question, the tables it would ground an answer on
and the join keys between them. With an OpenAI-compatible server it also answers, through
a ``CondensePlusContextChatEngine`` whose context holds the tables and their join keys.
Indexing never uses the LLM here (the heuristic generator), so start-up stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import llama_index_pearl
from llama_index_pearl import PearlTableIndex
from llama_index_pearl.generation import HeuristicQueryGenerator
from llama_index_pearl.retrieval.answer.join_hints import compute_join_hints

DEFAULT_FOLDER = llama_index_pearl.example_data()


def make_llm(base: str | None, model: str | None, api_key: str):
    """An ``OpenAILike`` chat LLM, or ``None`` when no server is configured."""
    if not (base and model):
        return None
    from llama_index.llms.openai_like import OpenAILike

    # max_retries=0: a dead server should fail the turn at once, not after minutes of retries
    return OpenAILike(model=model, api_base=base, api_key=api_key, is_chat_model=True, max_retries=0, timeout=120)


def questions(given: list[str] | None) -> Iterator[str]:
    """``--question`` values, else stdin lines until EOF (with a prompt when interactive)."""
    if given:
        yield from given
        return
    interactive = sys.stdin.isatty()
    while True:
        try:
            line = input("you> ") if interactive else sys.stdin.readline()
        except EOFError:
            return
        if not interactive and not line:
            return
        line = line.strip()
        if line in {"exit", "quit"}:
            return
        if line:
            yield line


def describe(index: PearlTableIndex, nodes) -> str:
    """Which tables a turn used (with scores) and the join keys between them."""
    tables = [n.node.metadata["table_id"] for n in nodes]
    lines = ["tables: " + ", ".join(f"{n.node.metadata['table_id']} ({n.score:.2f})" for n in nodes)]
    hints = compute_join_hints(index.join_graph, tables)
    lines += [f"  {h.text()}" for h in hints] or ["  (no join between these tables)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Chat with a folder of CSV tables (PEARL retrieval).")
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER, help="folder of .csv/.parquet files")
    parser.add_argument("--question", "-q", action="append", help="ask this and exit (repeatable)")
    parser.add_argument("-k", type=int, default=3, help="tables retrieved per question")
    parser.add_argument("--llm-base", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1")
    parser.add_argument("--llm-model", help="model name served there")
    parser.add_argument("--llm-api-key", default="not-needed")
    args = parser.parse_args(argv)

    shown = "the bundled music database" if args.folder == DEFAULT_FOLDER else args.folder
    print(f"Indexing {shown} ...", flush=True)
    index = PearlTableIndex.from_tables(args.folder, generator=HeuristicQueryGenerator())
    print(f"{len(index.tables)} tables, {len(index.join_paths)} join paths, {len(index.units)} units", flush=True)
    llm = make_llm(args.llm_base, args.llm_model, args.llm_api_key)
    chat = index.as_chat_engine(llm=llm, similarity_top_k=args.k, include_join_hints_in_text=True) if llm else None
    retriever = index.as_retriever(similarity_top_k=args.k)

    for question in questions(args.question):
        print(f"\nQ: {question}")
        if chat is None:
            nodes = retriever.retrieve(question)
            print(describe(index, nodes))
            print("(no LLM configured: pass --llm-base and --llm-model for answers)")
            continue
        try:
            response = chat.chat(question)
        except Exception as exc:  # a server error ends the turn, not the chat
            print(f"LLM error: {exc}")
            continue
        print(f"A: {response.response}")
        print(describe(index, response.source_nodes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
