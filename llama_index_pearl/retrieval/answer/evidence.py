"""How surely a question needs each candidate table: its evidence, and a probability fitted on every dev set.

Every kind of evidence the question leaves on a table (pure functions over numbers a search and the column
vectors give; testable without a model):

- **its score** against the best table's (``gap``), and the score of its *own* units, those that stand for it
  alone (``own_gap``): every table of a joined unit gets that unit's score under max-pooling, so a tie on a
  unit naming five tables is no evidence that the question needs all five (``shared_unit``);
- **the question's words it holds** (``words``): the share of their weight (idf) found in its name, headers
  and rows (:class:`~llama_index_pearl.retrieval.answer.words.QuestionWords`);
- **its columns**: the best cosine of the question with one of its columns (``column_gap``, against the best
  table's), and **each content word of the question against its columns** (``word_column``: how far it lies
  below the best table for the word it matches best; ``word_column_wins``: the share of the words it matches
  best; ``word_column_margin``: by how much): "revenue" finds ``payment.amount`` though no name
  spells it (:mod:`~llama_index_pearl.corpus.columns`);
- **what it adds to the seed** (``beyond_seed``): the share of the question's content words its columns answer
  better than the seed's, by ``BEYOND_SEED``: a table that holds what the seed (the set's first table to
  come in) lacks (the amounts
  behind "revenue" beside the product a question names) is likelier needed than one that repeats it;
- **what the seed leaves to it** (``seed_answers``, the same for every candidate but the seed): the share of the
  question's content words the seed's columns answer as well as any candidate's, within ``BEYOND_SEED``; a
  question its seed answers whole needs little else (a one-table question asks for one table);
- **its place in the join graph**: joins from the seed (``distance``, ``adjacent``), how many tables it joins
  (``centrality``: the centre of a database is in most of its questions), its rank, the tables in reach;
- **the question's length** (``question_words``, its content words): a long question needs more tables.

:class:`Confidence` holds the weights of a logistic model over these features: the logistic regression of
gold membership over the candidates of every question of every dev set, each set weighted alike
(``python benchmarks/table_sets.py --learn``, ``benchmarks/README.md``); its output is a probability, checked
for calibration (``ECE`` in ``pearl eval``).

Pipeline step: answer (docs/architecture.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np

from llama_index_pearl.corpus.lexical import text_tokens
from llama_index_pearl.text.words import written_words

__all__ = [
    "FEATURES",
    "FUNCTION_WORDS",
    "MAX_DISTANCE",
    "QUESTION_WORDS",
    "Candidate",
    "Confidence",
    "content_words",
    "features",
    "quoted_words",
    "word_shares",
    "word_weights",
]

MAX_DISTANCE = 4  # joins counted from the seed: farther tables, and tables no join reaches, count as this far
MAX_WORDS = 12  # content words of a question matched against columns
WORD_MATCH = 0.45  # a word's best column cosine below this names nothing (word_column_wins)
BEYOND_SEED = 0.05  # a column answers a word better than the seed's by this much: it adds to the seed (beyond_seed)

# Words that ask rather than name: a table holding "how" or "average" in a value says nothing of the question
QUESTION_WORDS = frozenset(
    [
        *("how", "many", "much", "what", "which", "who", "whom", "whose", "where", "when", "why"),
        *("show", "list", "give", "find", "return", "tell", "number", "count", "total", "average", "mean"),
        *("sum", "maximum", "minimum", "max", "min", "each", "every", "all", "different", "distinct", "name"),
    ]
)
# Function words and the words of any analytic request: no column answers for them
FUNCTION_WORDS = frozenset(
    [
        *("a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "is", "are"),
        *("was", "were", "be", "been", "being", "do", "does", "did", "has", "have", "had", "that", "this", "these"),
        *("those", "it", "its", "their", "there", "than", "then", "as", "into", "per", "over", "under", "between"),
        *("about", "more", "most", "less", "least", "i", "we", "our", "you", "your", "they", "them", "he", "she"),
        *("his", "her", "me", "my", "us", "also", "not", "no", "only", "any", "some", "such", "other", "same"),
        *("top", "first", "last", "one", "two", "three", "four", "five", "ten", "year", "years", "time", "times"),
        *("based", "across", "among", "within", "along", "using"),
    ]
)


def content_words(question: str) -> list[str]:
    """The words of a question a column may answer for: lower case, once each, in order, at most ``MAX_WORDS``.

    >>> content_words("Which genres earn us the most revenue from sales?")
    ['genres', 'earn', 'revenue', 'sales']

    Args:
        question: The question.
    """
    kept = (w for w in written_words(question) if len(w) > 2 and w not in FUNCTION_WORDS and w not in QUESTION_WORDS)
    return list(dict.fromkeys(kept))[:MAX_WORDS]


def word_weights(holders: Mapping[str, int], n_tables: int) -> dict[str, float]:
    """Each question word's weight: BM25's idf over tables (a word every table holds weighs little).

    >>> weights = word_weights({"name": 40, "wembley": 1}, 40)
    >>> weights["wembley"] > weights["name"] > 0
    True

    Args:
        holders: Word -> how many tables hold it.
        n_tables: Tables in reach.
    """
    return {
        word: math.log(1.0 + (n_tables - count + 0.5) / (count + 0.5)) for word, count in holders.items() if count > 0
    }


@dataclass(frozen=True)
class Candidate:
    """What a search and the column vectors say of one candidate table.

    Args:
        table_id: The table.
        score: Its pooled score (cosine plus lexical evidence).
        own_score: The best score of the units that stand for it alone (``None``: unknown, or it has none).
        unit_tables: How many tables its best unit stands for.
        column: The question's best cosine with one of its columns (``None``: no column vectors).
        word_columns: Each content word's best cosine with one of its columns (empty: none).
    """

    table_id: str
    score: float
    own_score: float | None = None
    unit_tables: int = 1
    column: float | None = None
    word_columns: tuple[float, ...] = ()


# the features, in the order of Confidence's weights
FEATURES = (
    "gap",
    "own_gap",
    "words",
    "distance",
    "centrality",
    "column_gap",
    "rank",
    "adjacent",
    "shared_unit",
    "word_column",
    "word_column_wins",
    "word_column_margin",
    "scope_size",
    "question_words",
    "quoted",
    "beyond_seed",
    "seed_answers",
)


@dataclass(frozen=True)
class Confidence:
    """Weights of the logistic model "the question needs this table" (one per feature of :data:`FEATURES`).

    Fitted by ``python benchmarks/table_sets.py --learn`` on every dev set (spider, spider_realistic, spider2_lite,
    tpch, nycflights13, business_words, lahman, tpcds and the two analyst_words sets), each weighted alike, with the
    questions read through the thesaurus, under the L2 penalty that held-out log-loss chose (3e-3 on standardised
    features); rounded.
    :meth:`without_columns` is the model fitted without the column features, for an index without column
    vectors.
    """

    bias: float = -2.03
    gap: float = -3.82
    own_gap: float = -0.35
    words: float = 2.18
    distance: float = -0.05
    centrality: float = 0.48
    column_gap: float = -2.2
    rank: float = -0.61
    adjacent: float = 0.39
    shared_unit: float = 0.47
    word_column: float = 1.49
    word_column_wins: float = 2.18
    word_column_margin: float = 7.94
    scope_size: float = -0.37
    question_words: float = 0.86
    quoted: float = 0.95
    beyond_seed: float = 0.35
    seed_answers: float = -0.96

    @classmethod
    def without_columns(cls) -> Confidence:
        """The model fitted on the same data without the column features (an index without column vectors)."""
        return cls(
            bias=-2.09,
            gap=-5.25,
            own_gap=-2.36,
            words=3.61,
            distance=-0.11,
            centrality=0.65,
            column_gap=0.0,
            rank=-0.82,
            adjacent=0.1,
            shared_unit=0.5,
            word_column=0.0,
            word_column_wins=0.0,
            word_column_margin=0.0,
            scope_size=-0.48,
            question_words=1.15,
            quoted=0.88,
            beyond_seed=0.0,
            seed_answers=0.0,
        )

    def weights(self) -> np.ndarray:
        """The feature weights in :data:`FEATURES`' order."""
        return np.asarray([getattr(self, name) for name in FEATURES], dtype=np.float64)

    def probabilities(self, matrix: np.ndarray) -> np.ndarray:
        """The probability of each row of a :func:`features` matrix."""
        logits = self.bias + matrix @ self.weights()
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -50.0, 50.0)))

    @classmethod
    def from_weights(cls, bias: float, weights: Mapping[str, float]) -> Confidence:
        """A model of fitted weights (a feature not named weighs nothing)."""
        names = {f.name for f in fields(cls)}
        return cls(bias=bias, **{n: float(weights.get(n, 0.0)) for n in names if n != "bias"})


_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'|(?<=\s)([A-Z][\w'-]*)")


def quoted_words(question: str) -> frozenset[str]:
    """The words of the things a question names: quoted, or written with a capital past its first word (a value
    of some table's rows, as CHESS's value index reads them), as BM25 tokens.

    >>> sorted(quoted_words('Which seats were sold for the Harbor Nights tour in Toronto or "the Vaults"?'))
    ['harbor', 'night', 'toronto', 'vault']

    Args:
        question: The question.
    """
    found = (next(g for g in match.groups() if g) for match in _QUOTED.finditer(question))
    return frozenset(t for text in found for t in text_tokens(text) if t not in QUESTION_WORDS)


def word_shares(
    candidates: Sequence[Candidate],
    words: Mapping[str, frozenset[str]],
    weights: Mapping[str, float],
    quoted: frozenset[str] = frozenset(),
) -> list[tuple[float, float]]:
    """Each candidate's share of the weight of the question's words that some candidate holds, and the same
    share of its quoted words (:func:`quoted_words`).

    >>> cands = [Candidate("a", 0.5), Candidate("b", 0.4)]
    >>> word_shares(cands, {"a": frozenset({"wembley"}), "b": frozenset({"how"})}, {"wembley": 2.0, "how": 1.0})
    [(1.0, 0.0), (0.0, 0.0)]

    Args:
        candidates: The candidates.
        words: Table -> the question's words it holds.
        weights: Question word -> its weight (:func:`word_weights`); :data:`QUESTION_WORDS` weigh nothing.
        quoted: The question's quoted words.
    """
    asked = {w: x for w, x in weights.items() if w not in QUESTION_WORDS}
    held = [words.get(c.table_id, frozenset()) for c in candidates]
    pairs = []
    for subset in (asked, {w: x for w, x in asked.items() if w in quoted}):
        total = sum(subset.get(w, 0.0) for w in set().union(*held)) if held else 0.0
        pairs.append([sum(subset.get(w, 0.0) for w in h) / total if total else 0.0 for h in held])
    return list(zip(*pairs))


def features(
    candidates: Sequence[Candidate],
    shares: Sequence[tuple[float, float]],
    distances: Mapping[str, int],
    degrees: Mapping[str, int],
    scope_size: int,
    question_words: int = 0,
    seed: str | None = None,
) -> np.ndarray:
    """The feature matrix of the candidates: one row per candidate, one column per :data:`FEATURES` name.

    >>> cands = [Candidate("a", 0.6, own_score=0.6), Candidate("b", 0.4, own_score=0.3)]
    >>> rows = features(cands, [(0.0, 0.0), (0.0, 0.0)], {"a": 0, "b": 1}, {}, 2)
    >>> [round(float(x), 2) for x in rows[1][:2]]
    [0.2, 0.3]

    Args:
        candidates: The ranking's first tables, best first.
        shares: Each candidate's share of the question's word weight and of its quoted words' weight
            (:func:`word_shares`).
        distances: Table -> joins from the seed (the seed 0; absent: unreachable).
        degrees: Table -> how many tables it joins.
        scope_size: The tables in reach.
        question_words: The question's content words (:func:`content_words`): a long question needs more tables.
        seed: The set's first table, which ``beyond_seed`` and ``seed_answers`` read against (``None``: none, no
            candidate adds).
    """
    if not candidates:
        return np.zeros((0, len(FEATURES)))
    top = candidates[0].score
    low = min(c.score for c in candidates)
    columns = np.asarray([c.column if c.column is not None else 0.0 for c in candidates])
    per_word = _word_matrix(candidates)
    first = next((i for i, c in enumerate(candidates) if c.table_id == seed), None)
    answered = _seed_answers(per_word, first)
    rows = []
    for i, c in enumerate(candidates):
        own = c.own_score if c.own_score is not None else low - 0.05
        distance = distances.get(c.table_id, MAX_DISTANCE + 1)
        rows.append(
            [
                top - c.score,
                top - own,
                shares[i][0],
                min(distance, MAX_DISTANCE),
                math.log1p(degrees.get(c.table_id, 0)),
                float(columns.max() - columns[i]) if c.column is not None else 0.0,
                math.log1p(i),
                float(distance == 1),
                float(c.unit_tables > 1),
                *_word_features(per_word, i),
                math.log(max(scope_size, 1)),
                math.log1p(question_words),
                shares[i][1],
                _beyond_seed(per_word, i, first),
                0.0 if i == first else answered,
            ]
        )
    return np.asarray(rows, dtype=np.float64)


def _word_matrix(candidates: Sequence[Candidate]) -> np.ndarray:
    """Words × candidates: each content word's best column cosine per candidate (``(0, n)`` without words)."""
    n_words = min(len(c.word_columns) for c in candidates)
    if n_words == 0:
        return np.zeros((0, len(candidates)))
    return np.asarray([c.word_columns[:n_words] for c in candidates], dtype=np.float64).T


def _beyond_seed(per_word: np.ndarray, i: int, seed: int | None) -> float:
    """``beyond_seed`` of candidate ``i``: the share of the words its columns answer better than the seed's."""
    if not len(per_word) or seed is None or i == seed:
        return 0.0
    return float((per_word[:, i] > per_word[:, seed] + BEYOND_SEED).mean())


def _seed_answers(per_word: np.ndarray, seed: int | None) -> float:
    """``seed_answers``: the share of the words whose best column the seed's matches, within ``BEYOND_SEED``."""
    if not len(per_word) or seed is None:
        return 0.0
    return float((per_word[:, seed] >= per_word.max(axis=1) - BEYOND_SEED).mean())


def _word_features(per_word: np.ndarray, i: int) -> tuple[float, float, float]:
    """``word_column``, ``word_column_wins``, ``word_column_margin`` of candidate ``i``."""
    if not len(per_word):
        return 0.0, 0.0, 0.0
    best = per_word.max(axis=1)
    mine = per_word[:, i]
    second = np.sort(per_word, axis=1)[:, -2] if per_word.shape[1] > 1 else best
    wins = (mine >= best) & (best > WORD_MATCH)
    margin = np.where(mine >= best, np.maximum(mine - second, 0.0), 0.0)
    return float((mine - best).max()), float(wins.mean()), float(margin.max())
