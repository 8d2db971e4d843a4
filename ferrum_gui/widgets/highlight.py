"""Small text helpers for the result and transcript widgets: rich-text term highlighting, clocks."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

HIGHLIGHT_STYLE = "font-weight:600; background-color:rgba(255, 200, 0, 0.35);"


def highlight_html(text: str, terms: Iterable[str], style: str = HIGHLIGHT_STYLE) -> str:
    """HTML-escape ``text`` and wrap every whole-word, case-insensitive match of ``terms``."""
    words = sorted({t.strip() for t in terms if t and t.strip()}, key=len, reverse=True)
    if not words:
        return html.escape(text)
    pattern = re.compile(r"(?<!\w)(" + "|".join(re.escape(w) for w in words) + r")(?!\w)", re.IGNORECASE)
    out, pos = [], 0
    for m in pattern.finditer(text):
        out.append(html.escape(text[pos:m.start()]))
        out.append(f'<span style="{style}">{html.escape(m.group(0))}</span>')
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def query_terms(query: str) -> list[str]:
    """Words of a query worth highlighting when the search engine did not report matches."""
    return [w for w in re.findall(r"\w+", query) if len(w) > 2]


def format_clock(seconds: float | None) -> str:
    """``75.5`` → ``1:15``; hours only when needed (``1:02:03``); ``--`` for unknown."""
    if seconds is None or seconds < 0:
        return "--"
    total = int(seconds)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def format_clock_ms(seconds: float) -> str:
    """``75.25`` → ``1:15.2`` (segment timestamps)."""
    m, s = divmod(max(0.0, seconds), 60)
    h, m = divmod(int(m), 60)
    return f"{h}:{m:02d}:{s:04.1f}" if h else f"{m}:{s:04.1f}"
