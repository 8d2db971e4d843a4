"""``PhraseJoiner``: turns committed phrases into the exact characters to type after what was
typed before, so that phrases committed one by one read as one text.

The dictation engine commits words a few at a time ("Hello, my name", "is Anna.", "How are you?").
Each phrase is typed on its own, so the spacing and the capital letter at a sentence start are
decided here from the tail of the text already typed, never by re-typing earlier text.
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"[.!?…]['\"’”)\]]*$")
_NO_SPACE_BEFORE = tuple(",.;:!?…)]}%’”")        # a phrase starting with these sticks to the last word
_NO_SPACE_AFTER = tuple("([{“‘¿¡\n")              # ... and after these the next word sticks to them
_SPACES = re.compile(r"\s+")


class PhraseJoiner:
    """Feed phrases in order with ``join(phrase)``; each call returns the text to type.

    ``capitalise_start``: the first phrase of the session starts a sentence (the usual case when a
    user starts dictating).  ``typed`` is everything returned so far.
    """

    def __init__(self, capitalise_start: bool = True, typed: str = ""):
        self.capitalise_start = capitalise_start
        self.typed = typed

    def join(self, phrase: str) -> str:
        phrase = _SPACES.sub(" ", phrase).strip()
        if not phrase:
            return ""
        piece = self._capitalised(phrase) if self._starts_sentence() else phrase
        if self._needs_space(phrase):
            piece = " " + piece
        self.typed += piece
        return piece

    def _starts_sentence(self) -> bool:
        tail = self.typed.rstrip()
        return self.capitalise_start if not tail else bool(_SENTENCE_END.search(tail))

    def _needs_space(self, phrase: str) -> bool:
        if not self.typed or self.typed[-1].isspace():
            return False
        return not phrase.startswith(_NO_SPACE_BEFORE) and not self.typed.endswith(_NO_SPACE_AFTER)

    @staticmethod
    def _capitalised(phrase: str) -> str:
        """Upper-case the first letter (after any opening quote or bracket), leave the rest alone."""
        for i, ch in enumerate(phrase):
            if ch.isalpha():
                return phrase[:i] + ch.upper() + phrase[i + 1:]
            if ch.isdigit():
                break
        return phrase
