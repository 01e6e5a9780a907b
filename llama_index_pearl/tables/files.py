"""Read CSV and Parquet files the way users' files are, and only as much as PEARL needs.

CSV: a byte-order mark is dropped; the encoding is UTF-8 when the file's first
megabyte decodes as UTF-8, else what ``charset-normalizer`` detects (Western
``cp1252`` among equally plausible single-byte guesses: Excel's export); the
delimiter is sniffed among ``,`` ``;`` tab and ``|``. All of it can be given
with ``csv_options``. Cells that still do not decode become U+FFFD and a warning
names the file. Both formats read at most ``max_rows`` rows (CSV: ``nrows``;
Parquet: the leading row groups) and report the file's exact row count.

Pipeline step: tables (docs/architecture.md).
"""

from __future__ import annotations

import codecs
import csv
import logging
import re
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "CONTROL_CHARACTERS",
    "MAX_CONTROL_SHARE",
    "CsvOptions",
    "detect_encoding",
    "read_csv_file",
    "read_parquet_file",
    "refuse_binary",
    "sniff_delimiter",
]

logger = logging.getLogger(__name__)

DELIMITERS = (",", ";", "\t", "|")
SAMPLE_BYTES = 1 << 20
_SNIFF_LINES = 50
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_SKIPPED_LINE = re.compile(r"Skipping line (\d+):")
_BOMS = {b"\xef\xbb\xbf": "utf-8-sig", b"\xff\xfe": "utf-16", b"\xfe\xff": "utf-16"}


@dataclass(frozen=True)
class CsvOptions:
    """How to read CSV files; ``None`` fields are detected per file.

    Args:
        encoding: A Python codec name (``"latin-1"``, ``"utf-8"``...).
        delimiter: One character.
        quotechar: One character.
    """

    encoding: str | None = None
    delimiter: str | None = None
    quotechar: str = '"'

    def __post_init__(self) -> None:
        if self.encoding is not None:
            try:
                codecs.lookup(self.encoding)
            except LookupError as exc:
                raise ValueError(f"csv_options: unknown encoding {self.encoding!r}") from exc
        for name in ("delimiter", "quotechar"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or len(value) != 1):
                raise ValueError(f"csv_options: {name} must be one character, got {value!r}")

    @classmethod
    def of(cls, options: CsvOptions | Mapping[str, Any] | None) -> CsvOptions:
        """``options`` as a :class:`CsvOptions` (a dict's unknown keys are named in the error)."""
        if options is None:
            return cls()
        if isinstance(options, CsvOptions):
            return options
        if not isinstance(options, Mapping):
            raise ValueError(f"csv_options must be a dict or CsvOptions, got {type(options).__name__}")
        unknown = sorted(set(options) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"csv_options: unknown option(s) {unknown}; known: {sorted(cls.__dataclass_fields__)}")
        return cls(**options)


def detect_encoding(sample: bytes) -> str:
    """The encoding of a file's leading bytes: BOM, else UTF-8 if it decodes to text, else a detector's best guess."""
    for bom, name in _BOMS.items():
        if sample.startswith(bom):
            return name
    try:
        # a sample cut mid-character is fine: only complete characters must decode
        text = codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
        if "\x00" not in text:  # NULs decode as UTF-8 too, but say UTF-16 without a BOM (or binary)
            return "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = list(from_bytes(sample))
    if not matches:
        return "utf-8"
    best = min(m.chaos for m in matches)
    tied = [m for m in matches if m.chaos == best]
    for match in tied:
        if "cp1252" in match.could_be_from_charset:
            return "cp1252"
    return tied[0].encoding


def sniff_delimiter(text: str, quotechar: str = '"') -> str:
    """The candidate delimiter that splits the leading lines into the same number (> 1) of fields."""
    lines = _LINE_BREAK.split(text)[:_SNIFF_LINES]  # not splitlines(): \x1c-\x1e, \x85, \u2028 are cell text in CSV
    if len(lines) > 1 and not text.endswith(("\n", "\r")):
        lines = lines[:-1]  # the sample may end mid-line
    best, best_fields = ",", 1
    for delimiter in DELIMITERS:
        counts = [len(row) for row in _parsed(lines, delimiter, quotechar) if row]
        if counts and min(counts) > 1 and len(set(counts)) == 1 and counts[0] > best_fields:
            best, best_fields = delimiter, counts[0]
    return best


def _parsed(lines: list[str], delimiter: str, quotechar: str) -> Iterator[list[str]]:
    """The rows of ``lines`` that Python's ``csv`` parses: one with a cell over its size limit is left out."""
    reader = csv.reader(lines, delimiter=delimiter, quotechar=quotechar)
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error:
            continue  # the reader starts again at the next line


@dataclass(frozen=True)
class _Dialect:
    encoding: str
    delimiter: str
    quotechar: str
    skip_bad_lines: bool = False


# Characters text does not hold: C0 controls but tab, line feed and carriage return; DEL and the C1 controls; U+FFFD,
# what a byte the encoding cannot read decodes to
CONTROL_CHARACTERS = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")
# At most 0.022 % of the first MiB of each of the 2,065 CSV files of the dev sets and the sample lakes; 20 % and
# more in binaries without NULs: benchmarks/README.md, "Reading files"
MAX_CONTROL_SHARE = 0.10
# Below it a file is a few cells, whose text may hold anything: a share of so few characters tells nothing
MIN_SHARE_CHARACTERS = 1_000

# Leading bytes of files that end up named .csv but are not text: the message says what the file is.
_BINARY_SIGNATURES = {
    b"\x1f\x8b": "gzip-compressed",
    b"PK\x03\x04": "a zip archive (or an Excel .xlsx workbook)",
    b"PAR1": "a Parquet file",
    b"BZh": "bzip2-compressed",
    b"\xfd7zXZ\x00": "xz-compressed",
    b"\x28\xb5\x2f\xfd": "zstd-compressed",
    b"\xd0\xcf\x11\xe0": "an old Excel .xls workbook",
    b"%PDF-": "a PDF document",
}


def refuse_binary(sample: bytes, text: str) -> None:
    """A ``ValueError`` saying what the file is when its leading bytes are not CSV text.

    Text never holds NUL characters once decoded (UTF-16 files decode without them),
    while compressed files, spreadsheets and crashed downloads (runs of zeros) do. Nor does text hold
    control characters but tab and line breaks, nor bytes its encoding cannot read, beyond a stray one:
    a binary file without NULs (random or compressed bytes) is refused by their share
    (:data:`MAX_CONTROL_SHARE`, in a sample of :data:`MIN_SHARE_CHARACTERS` at least).

    Args:
        sample: The file's leading bytes.
        text: ``sample`` decoded with the file's encoding.
    """
    for signature, what in _BINARY_SIGNATURES.items():
        if sample.startswith(signature):
            raise ValueError(f"the file is {what}, not CSV text")
    if "\x00" in text:
        raise ValueError(
            f"the file holds NUL bytes ({text.count(chr(0)):,} in its first {len(sample):,} bytes): "
            "a binary file or an incomplete download, not CSV text"
        )
    controls = len(CONTROL_CHARACTERS.findall(text)) if len(text) >= MIN_SHARE_CHARACTERS else 0
    if controls > MAX_CONTROL_SHARE * len(text):
        raise ValueError(
            f"{controls:,} of its first {len(text):,} characters are control characters or bytes no text encoding "
            "reads: a binary file, not CSV text"
        )


def _dialect(path: Path, options: CsvOptions, skip_bad_lines: bool = False) -> _Dialect:
    with path.open("rb") as handle:
        sample = handle.read(SAMPLE_BYTES)
    encoding = options.encoding or detect_encoding(sample)
    refuse_binary(sample, sample.decode(encoding, errors="replace"))
    if options.encoding is None and encoding not in ("utf-8", "utf-8-sig"):
        logger.info("CSV %s is not UTF-8; reading it as %s (csv_options={'encoding': ...} to override)", path, encoding)
    delimiter = options.delimiter or sniff_delimiter(sample.decode(encoding, errors="replace"), options.quotechar)
    return _Dialect(encoding, delimiter, options.quotechar, skip_bad_lines)


def csv_header(path: Path, dialect: _Dialect) -> list[str]:
    """The header row; read here because pandas silently renames a repeated header to ``name.1``.

    The first data row is checked too: given more fields than the header names, pandas
    takes the first column as the row index and shifts every value one column left,
    while a longer later row is a parser error. Both are the same error here. Read by
    pandas' parser, as the rows are: it has no limit on a cell's size (Python's ``csv`` stops
    at 131,072 characters, which a JSON, HTML or base64 cell passes).
    """
    try:
        head = pd.read_csv(path, **{**_read_options(dialect), "header": None}, nrows=2)
    except pd.errors.EmptyDataError:
        head = pd.DataFrame()
    header = [str(h) for h in head.iloc[0]] if len(head) else []
    if not header or all(not h.strip() for h in header):
        raise ValueError(f"Table {path.stem!r} (file {str(path)!r}) has no columns")
    return [h.replace("\ufeff", "").strip() for h in header]


def read_csv_file(
    path: Path,
    names_of: Any,
    *,
    max_rows: int | None,
    options: CsvOptions | None = None,
    skip_bad_lines: bool = False,
) -> tuple[pd.DataFrame, int, list[int]]:
    """Up to ``max_rows`` rows of a CSV file as text, its exact row count, and the lines skipped.

    Args:
        path: The file.
        names_of: Maps the header row to the column names to use (and validates them).
        max_rows: Rows to read at most; ``None`` reads all.
        options: Encoding, delimiter, quote character; detected where ``None``.
        skip_bad_lines: Skip a row with more fields than the header (pandas' ``on_bad_lines``) instead of
            refusing the file; the lines skipped among the rows read are returned (1-based, the header line 1).
    """
    dialect = _dialect(path, options or CsvOptions(), skip_bad_lines)
    with _bad_lines():  # the header's read sees the first data row again: counted with the rows
        names = names_of(csv_header(path, dialect))
    with _bad_lines() as bad:
        frame = pd.read_csv(path, **_read_options(dialect), names=names, nrows=max_rows)
    if _has_replacement(frame):
        logger.warning(
            "CSV %s has bytes that are not valid %s; they read as U+FFFD (pass csv_options={'encoding': ...})",
            path,
            dialect.encoding,
        )
    with _bad_lines():  # a count past the rows read skips the bad lines there too, uncounted
        total = len(frame) if max_rows is None or len(frame) < max_rows else _count_rows(path, dialect, len(names))
    return frame, total, bad


@contextmanager
def _bad_lines() -> Iterator[list[int]]:
    """The lines pandas skipped in the block (its ``ParserWarning`` of ``on_bad_lines="warn"``), 1-based."""
    found: list[int] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        yield found
    for warning in caught:
        if issubclass(warning.category, pd.errors.ParserWarning):
            found += [int(n) for n in _SKIPPED_LINE.findall(str(warning.message))]
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)


def _read_options(dialect: _Dialect) -> dict[str, Any]:
    """Cells as text, as detected; undecodable bytes become U+FFFD rather than an error."""
    return {
        "dtype": str,
        "keep_default_na": False,
        "encoding": dialect.encoding,
        "encoding_errors": "replace",
        "sep": dialect.delimiter,
        "quotechar": dialect.quotechar,
        "header": 0,
        "index_col": False,  # never a column taken as the row index, whatever a row's length
        "on_bad_lines": "warn" if dialect.skip_bad_lines else "error",  # warned lines are skipped and counted
    }


def _has_replacement(frame: pd.DataFrame) -> bool:
    if any("\ufffd" in c for c in frame.columns):
        return True
    return any(frame[c].str.contains("\ufffd", regex=False).any() for c in frame.columns)


def _count_rows(path: Path, dialect: _Dialect, fields: int) -> int:
    """Data rows of the whole file, streamed in bounded memory (quoted newlines counted right), counted as the
    read counts them: with ``skip_bad_lines``, a row with more fields than the header's ``fields`` is no row, so
    a table's row count is the same whether it is read whole or sampled.

    Arrow's multi-threaded reader counts 1 GiB in about a fifth of the time pandas takes, so it is
    used when the ``parquet`` extra (pyarrow) is installed; a file it refuses (a long row without
    ``skip_bad_lines``) and installs without pyarrow are counted by pandas' C parser.
    """
    try:
        return _count_rows_arrow(path, dialect, fields)
    except (ImportError, ValueError, UnicodeError):
        total = 0
        # pandas checks a row's length only when it reads every column: a long row must be seen to be skipped
        columns = None if dialect.skip_bad_lines else [0]
        with pd.read_csv(path, **_read_options(dialect), usecols=columns, chunksize=20_000) as chunks:
            for chunk in chunks:
                total += len(chunk)
        return total


def _count_rows_arrow(path: Path, dialect: _Dialect, fields: int) -> int:
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    short = 0

    def ragged(row: Any) -> str:
        nonlocal short
        if row.actual_columns < row.expected_columns:  # pandas pads a short row: it is a row
            short += 1
            return "skip"
        return "skip" if dialect.skip_bad_lines else "error"

    reader = pa_csv.open_csv(
        path,
        read_options=pa_csv.ReadOptions(
            encoding=dialect.encoding, skip_rows=1, column_names=[f"f{i}" for i in range(fields)], block_size=1 << 20
        ),
        parse_options=pa_csv.ParseOptions(
            delimiter=dialect.delimiter,
            quote_char=dialect.quotechar,
            newlines_in_values=True,
            invalid_row_handler=ragged,
        ),
        convert_options=pa_csv.ConvertOptions(include_columns=["f0"], column_types={"f0": pa.binary()}),
    )
    try:
        return sum(batch.num_rows for batch in reader) + short
    except pa.ArrowException as exc:  # ArrowInvalid is a ValueError; others are mapped to one here
        raise ValueError(str(exc)) from exc


def read_parquet_file(path: Path, *, max_rows: int | None) -> tuple[pd.DataFrame, int]:
    """Up to ``max_rows`` rows of a Parquet file (only the row groups they live in), and its row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as parquet:
        total = parquet.metadata.num_rows
        if max_rows is None or total <= max_rows:
            return parquet.read().to_pandas(), total
        batches, kept = [], 0
        for batch in parquet.iter_batches(batch_size=min(max_rows, 65_536)):
            batches.append(batch.slice(0, max_rows - kept))
            kept += batches[-1].num_rows
            if kept >= max_rows:
                break
        return pa.Table.from_batches(batches).to_pandas(), total
