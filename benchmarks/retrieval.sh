#!/usr/bin/env bash
# Retrieval benchmarks behind the README tables. Usage:
#   bash benchmarks/retrieval.sh [OUT_DIR] [LLM_BASE]
# Without LLM_BASE only the offline (heuristic) rows run. With it (e.g. http://127.0.0.1:8011/v1 from
# ../shared/tools/local-llm start) the LLM rows run too; generations are cached in OUT_DIR/llm_cache.
set -euo pipefail
OUT=${1:-runs}
LLM=${2:-}
BENCH=${BENCH:-../shared/bench}
PEARL=${PEARL:-pearl}
mkdir -p "$OUT"
run() { local name=$1; shift; echo "== $name"; "$PEARL" eval "$@" --json "$OUT/$name.json" | tail -n +2; }

run spider_whole_table "$BENCH/spider" --method whole-table
run spider_bm25 "$BENCH/spider" --method bm25
run spider_pearl_heuristic "$BENCH/spider" --method pearl
for flag in explicit-only implicit-only random-view random-query; do
  run "spider_pearl_heuristic_${flag}" "$BENCH/spider" --method pearl "--$flag"
done
# budget sweep: K per pool; 120 >= every explicit candidate path on spider (105)
run spider_pearl_heuristic_budget81 "$BENCH/spider" --method pearl --budget 81
run spider_pearl_heuristic_budget120 "$BENCH/spider" --method pearl --budget 120
for flag in explicit-only implicit-only random-view; do
  run "spider_pearl_heuristic_budget120_${flag}" "$BENCH/spider" --method pearl --budget 120 "--$flag"
done
for titles in titles no-titles; do
  run "fetaqa_whole_table_${titles}" "$BENCH/fetaqa_dev" --method whole-table "--$titles"
  run "fetaqa_pearl_heuristic_${titles}" "$BENCH/fetaqa_dev" --method pearl --random-query "--$titles"
done
if [ -n "$LLM" ]; then
  llm=(--llm-base "$LLM" --llm-model local --llm-timeout 300 --concurrency 1 --cache-dir "$OUT/llm_cache")
  # budget 120 first: its paths include the default budget's, so the later runs are served from the cache
  run spider_pearl_llm_budget120 "$BENCH/spider" --method pearl --budget 120 "${llm[@]}"
  run spider_pearl_llm "$BENCH/spider" --method pearl "${llm[@]}"
  for flag in explicit-only implicit-only random-view; do
    run "spider_pearl_llm_${flag}" "$BENCH/spider" --method pearl "--$flag" "${llm[@]}"
    run "spider_pearl_llm_budget120_${flag}" "$BENCH/spider" --method pearl --budget 120 "--$flag" "${llm[@]}"
  done
fi
python3 "$(dirname "$0")/summarize.py" "$OUT"/*.json
