"""What reaches the terminal: output flags, log lines, and text shown with its control characters escaped.

Kept free of the pipeline's imports: ``pearl --help`` and ``pearl --version`` use it
before any command has loaded LlamaIndex or an encoder.

Pipeline step: cli (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from typing import Any

__all__ = ["add_output_options", "configure_output", "show", "shows_progress", "terminal_text"]

LOG_FORMAT = "%(levelname)s %(message)s"


def terminal_text(text: str) -> str:
    """``text`` with each non-printable character but the newline written as its escape (``\\x1b``, ``\\u202e``).

    Table ids, column names, cells and generated questions come from users' files,
    databases and LLMs: an ESC, BEL or bidirectional override among them would
    otherwise drive the terminal that shows them.
    """
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == "\n" else repr(ch)[1:-1] for ch in text)


def show(text: str, *, file: Any = None) -> None:
    """Print ``text`` for a person (:func:`terminal_text`), to stdout unless ``file`` is given."""
    print(terminal_text(text), file=file)


def add_output_options(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """``-v`` / ``-q``, accepted before or after the subcommand.

    Args:
        parser: The top-level parser or a subcommand's.
        top_level: Set the defaults here; subcommands leave them unset so a flag
            given before the subcommand is not reset by the subparser.
    """
    default: Any = False if top_level else argparse.SUPPRESS
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "-v", "--verbose", action="store_true", default=default, help="log each step; progress bars even when piped"
    )
    group.add_argument(
        "-q", "--quiet", action="store_true", default=default, help="print results only: no summary, no progress bars"
    )


def shows_progress(args: argparse.Namespace) -> bool:
    """Whether a build shows a progress bar per stage: when stderr is a terminal, unless ``-q``; always with ``-v``.

    Piped or redirected, a build prints nothing more than before (a log, a CI job); ``-v`` shows them wherever
    stderr goes, as it did before they were on by default.
    """
    if getattr(args, "quiet", False):
        return False
    if getattr(args, "verbose", False):
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


class _TerminalFormatter(logging.Formatter):
    """Log lines name files, tables and columns: their control characters are shown escaped, never sent raw."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_text(super().format(record))


def configure_output(verbose: bool, quiet: bool) -> None:
    """Logging level, and silence for the encoder's loading bars and warnings unless ``verbose``."""
    level = logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING
    logging.basicConfig(level=level, format=LOG_FORMAT)
    for handler in logging.getLogger().handlers:
        if getattr(handler, "stream", None) in (sys.stderr, sys.stdout):
            handler.setFormatter(_TerminalFormatter(LOG_FORMAT))
    if verbose:
        return
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module="transformers|sentence_transformers|torch")
    for name in ("sentence_transformers", "transformers", "httpx", "faiss"):
        logging.getLogger(name).setLevel(logging.ERROR)
    if "transformers" in sys.modules:  # else TRANSFORMERS_VERBOSITY above applies when (if) it is imported
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
