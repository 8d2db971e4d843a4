"""Where in a passage a query's words are: the exact phrase, the densest cluster of matched words,
and the excerpt of the passage around them that a result shows."""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACE = re.compile(r"\s")
# Words too common to say anything about a match (kept out of keyword queries and highlights).
STOPWORDS = frozenset(["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"])
CLUSTER_CHARS = 200  # matched words this close together count as one cluster


def query_words(query: str | None) -> list[str]:
    """Every word of the query, lower case and in order (stopwords kept: they belong to a phrase)."""
    return _WORD.findall((query or "").lower())


def keyword_terms(query: str | None) -> list[str]:
    """Distinct words of the query worth matching (no stopwords), lower case and in order."""
    return list(dict.fromkeys(w for w in query_words(query) if w not in STOPWORDS))


def phrase_span(text: str, query: str | None) -> tuple[int, int] | None:
    """Span of the first place ``text`` holds the query's words in order, next to one another
    (any spaces or punctuation between them, any case); None for a one-word query."""
    words = query_words(query)
    if len(words) < 2:
        return None
    pattern = r"(?<!\w)" + r"\W+".join(re.escape(w) for w in words) + r"(?!\w)"
    match = re.search(pattern, text, re.IGNORECASE)
    return match.span() if match else None


def _occurrences(text: str, terms: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, lower-case word) of every whole-word, case-insensitive occurrence of ``terms``."""
    words = sorted({t.strip().lower() for t in terms if t and t.strip()}, key=len, reverse=True)
    if not words:
        return []
    pattern = re.compile(r"(?<!\w)(" + "|".join(re.escape(w) for w in words) + r")(?!\w)", re.IGNORECASE)
    return [(m.start(), m.end(), m.group(0).lower()) for m in pattern.finditer(text)]


def best_span(text: str, terms: Iterable[str], query: str | None = None) -> tuple[int, int] | None:
    """Span of the best match in ``text``: the query as an exact phrase, else the run of matched
    ``terms`` within ``CLUSTER_CHARS`` holding the most distinct ones (the first such run on a tie);
    None when no term occurs."""
    phrase = phrase_span(text, query)
    if phrase is not None:
        return phrase
    found = _occurrences(text, terms)
    best, best_count = None, 0
    for i, (start, _end, _word) in enumerate(found):
        run = [o for o in found[i:] if o[1] - start <= CLUSTER_CHARS]
        count = len({word for _s, _e, word in run})
        if count > best_count:
            best, best_count = (start, run[-1][1]), count
    return best


def excerpt(text: str, span: tuple[int, int] | None, width: int) -> str:
    """About ``width`` characters of ``text`` on whole words, whitespace folded, holding ``span``
    (a third of the room before it, the rest after), with an ellipsis where text was cut."""
    if len(" ".join(text.split())) <= width:
        return " ".join(text.split())
    focus_start, focus_end = span or (0, 0)
    start = max(0, focus_start - max(0, width - (focus_end - focus_start)) // 3)
    start = max(0, min(start, len(text) - width))
    end = min(len(text), start + width)
    if start > 0 and not text[start - 1].isspace():  # begin and end on whole words
        space = _SPACE.search(text, start, min(focus_start, end))
        start = space.end() if space else start
    if end < len(text) and not text[end].isspace():
        spaces = [m.start() for m in _SPACE.finditer(text, max(focus_end, start), end)]
        end = spaces[-1] if spaces else end
    cut = " ".join(text[start:end].split())
    return ("…" if text[:start].strip() else "") + cut + ("…" if text[end:].strip() else "")
