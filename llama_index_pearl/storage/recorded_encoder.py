"""The encoder an index answers with: the one its manifest records, or one given that embeds alike.

An index's vectors compare only with vectors of the encoder that made them. ``pearl.json`` records that encoder's
class and model name (``text.models.encoder_identity``); a load takes the given encoder only if it is that one
(or ``allow_encoder_change``), else rebuilds the recorded one, and refuses one whose dimension differs.

Pipeline step: storage (docs/architecture.md).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding

from llama_index_pearl.text.models import (
    encoder_from_identity,
    encoder_identity,
    prepare_encoder,
    same_encoder,
    settings_embed_model,
)

__all__ = ["check_dimension", "index_encoder"]

logger = logging.getLogger(__name__)


def index_encoder(
    folder: Path, manifest: dict[str, Any], given: BaseEmbedding | None, allow_change: bool
) -> BaseEmbedding:
    """The given encoder if it is the index's (or a change is allowed), else the recorded one.

    Given none, ``Settings.embed_model`` answers when it is the recorded encoder (an index built with it); another
    one set there never replaces the index's encoder: its vectors would not compare with the index's.
    """
    recorded = manifest["encoder"]
    model = given if given is not None else _recorded_encoder(folder, recorded)
    identity = encoder_identity(model)
    if not allow_change and not same_encoder(identity, recorded):
        raise ValueError(
            f"Encoder mismatch: the index at {str(folder)!r} was built with {recorded.get('class', '?')}"
            f"({recorded.get('model_name')!r}), the given encoder is {identity['class']}({identity['model_name']!r}); "
            "its vectors would rank nonsense. Pass the index's encoder, or allow_encoder_change=True "
            "if the two are known to embed alike"
        )
    if allow_change and not same_encoder(identity, recorded):
        logger.warning(
            "Loading %s with encoder %s (built with %s): allow_encoder_change=True", folder, identity, recorded
        )
    prepare_encoder(model, batches=False, background=True)  # while the index is read; check_dimension waits
    return model


def _recorded_encoder(folder: Path, recorded: dict[str, str]) -> BaseEmbedding:
    """The encoder the manifest names: ``Settings.embed_model`` if it is that one, else rebuilt from its name."""
    chosen = settings_embed_model()
    if chosen is not None and same_encoder(encoder_identity(chosen), recorded):
        return chosen
    built_with = f"{recorded.get('class', '?')}({recorded.get('model_name')!r})"
    setting = "" if chosen is None else f"; Settings.embed_model is {_named(chosen)}, another encoder"
    model = encoder_from_identity(recorded)
    if model is None:
        raise ValueError(
            f"The index at {str(folder)!r} was built with encoder {built_with}, which cannot be rebuilt here"
            f"{setting}: pass embed_model="
        )
    if chosen is not None:
        logger.warning(
            "%s answers with the encoder it was built with, %s%s (pass embed_model= to choose)",
            folder,
            built_with,
            setting,
        )
    return model


def _named(model: BaseEmbedding) -> str:
    identity = encoder_identity(model)
    return f"{identity['class']}({identity['model_name']!r})"


def check_dimension(folder: Path, manifest: dict[str, Any], model: BaseEmbedding) -> None:
    """Refuse an encoder whose vectors are not as long as the index's (``manifest["dimension"]``)."""
    dimension = manifest["dimension"]
    model_dimension = len(model.get_query_embedding("dimension probe"))
    if model_dimension != dimension:
        recorded = manifest["encoder"]
        raise ValueError(
            f"Embedding dimension mismatch: index at {str(folder)!r} was built with "
            f"{recorded.get('model_name')!r} (dimension {dimension}), the given model "
            f"produces dimension {model_dimension}"
        )
