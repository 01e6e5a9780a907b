"""The bundled music database: eight small CSV files shipped with the package, for a first index anywhere.

Pipeline step: tables (docs/architecture.md).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["example_data"]


def example_data() -> Path:
    """The folder of the bundled music database, wherever the package is installed.

    Eight CSV files of one small music business: ``artists``, ``labels``, ``albums``, ``songs``, ``cities``,
    ``venues``, ``concerts`` and ``tickets``, joined by their ``..._id`` keys. ``pearl demo`` indexes it, and
    ``pearl demo --data-folder`` prints this folder for the shell.

    Examples:
        >>> sorted(p.name for p in example_data().glob("*.csv"))[:3]
        ['albums.csv', 'artists.csv', 'cities.csv']
    """
    return Path(__file__).resolve().parents[1] / "example_data"
