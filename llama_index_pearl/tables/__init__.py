"""Tables: what users hold (DataFrames, CSV/Parquet files, SQL databases) read into ``Table`` objects.

Pipeline step: tables (docs/architecture.md).
"""
