"""The share of control characters in CSV files: what tells a text file from a binary one named .csv.

For every ``*.csv`` under the folders given, the share of the first MiB (decoded as ``pearl`` decodes it) that is
control characters (tab and line breaks aside) or bytes the encoding cannot read: the figure behind
``llama_index_pearl.tables.files.MAX_CONTROL_SHARE``. Prints the files with the highest shares.

    python benchmarks/control_share.py ../shared/bench ../shared/lakes
"""

from __future__ import annotations

import argparse
from pathlib import Path

from llama_index_pearl.tables.files import CONTROL_CHARACTERS, SAMPLE_BYTES, detect_encoding


def control_share(path: Path) -> float:
    """The share of control characters and undecodable bytes in the file's first MiB."""
    with path.open("rb") as handle:
        sample = handle.read(SAMPLE_BYTES)
    text = sample.decode(detect_encoding(sample), errors="replace")
    return len(CONTROL_CHARACTERS.findall(text)) / len(text) if text else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--top", type=int, default=5, help="files shown, highest share first")
    args = parser.parse_args()
    shares = sorted(((control_share(p), str(p)) for f in args.folders for p in Path(f).rglob("*.csv")), reverse=True)
    print(f"{len(shares)} CSV files; highest shares of control characters in the first MiB:")
    for share, path in shares[: args.top]:
        print(f"  {100 * share:.4f} %  {path}")


if __name__ == "__main__":
    main()
