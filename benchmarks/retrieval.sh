#!/usr/bin/env bash
# Retrieval benchmarks behind the README tables, on every dev set. Usage:
#   bash benchmarks/retrieval.sh [OUT_DIR] [LLM_BASE]
# `_dense` rows score units by the encoder alone (`--lexical-weight 0`, the paper's scoring).
# Without LLM_BASE only the offline (heuristic) rows run. With it (e.g. http://127.0.0.1:8011/v1 from
# ../shared/tools/local-llm start) the LLM rows run too; generations are cached in OUT_DIR/llm_cache.
set -euo pipefail
OUT=${1:-runs}
LLM=${2:-}
BENCH=${BENCH:-../shared/bench}
PEARL=${PEARL:-pearl}
HERE=$(dirname "$0")
mkdir -p "$OUT"
run() { local name=$1; shift; echo "== $name"; "$PEARL" eval "$@" --json "$OUT/$name.json" | tail -n +2; }

# spider_rows10: spider with 10 sample rows per table (tables known from a few rows only)
python3 "$HERE/variants.py" "$BENCH/spider" "$OUT/variants/spider_rows10" --rows 10
SETS=("$BENCH/spider" "$BENCH/spider_realistic" "$OUT/variants/spider_rows10")
for dir in "${SETS[@]}"; do
  b=$(basename "$dir")
  run "${b}_llamaindex" "$dir" --method llamaindex  # the anchor: LlamaIndex's ObjectIndex + SQLTableNodeMapping
  run "${b}_whole_table" "$dir" --method whole-table
  run "${b}_whole_table_dense" "$dir" --method whole-table --lexical-weight 0
  run "${b}_pearl_heuristic" "$dir" --method pearl
  run "${b}_pearl_heuristic_dense" "$dir" --method pearl --lexical-weight 0
  run "${b}_pearl_heuristic_no_provenance" "$dir" --method pearl --no-provenance
done
run spider_bm25 "$BENCH/spider" --method bm25
for flag in explicit-only implicit-only random-view random-query; do
  run "spider_pearl_heuristic_${flag}" "$BENCH/spider" --method pearl "--$flag"
done
# budget sweep: K paths per pool (default for the heuristic: every candidate path)
for k in 20 40; do
  run "spider_pearl_heuristic_budget${k}" "$BENCH/spider" --method pearl --budget "$k"
done
run fetaqa_llamaindex "$BENCH/fetaqa_dev" --method llamaindex  # schema text only: titles are not part of it
for titles in titles no_titles; do
  flags=()
  [ "$titles" = no_titles ] && flags=(--no-titles)  # titles are on by default
  run "fetaqa_whole_table_${titles}" "$BENCH/fetaqa_dev" --method whole-table "${flags[@]}"
  run "fetaqa_pearl_heuristic_${titles}" "$BENCH/fetaqa_dev" --method pearl --random-query "${flags[@]}"
done
if [ -n "$LLM" ]; then
  llm=(--llm-base "$LLM" --llm-model local --llm-timeout 300 --concurrency 1 --cache-dir "$OUT/llm_cache")
  for dir in "${SETS[@]}"; do
    run "$(basename "$dir")_pearl_llm" "$dir" --method pearl "${llm[@]}"
  done
  run spider_pearl_llm_no_fallback "$BENCH/spider" --method pearl --no-fallback "${llm[@]}"
fi
python3 "$HERE/summarize.py" "$OUT"/*.json
