"""What a plain answer says: a short answer is first asked as the chat would ask it (issue 19).

Measured with the 1.5B on CUAD, the model asked a plain question abstains where nothing is stated
more often than when it fills a form, where it says "stated" to nearly everything. So a plain answer
that says the document does not state it ends the field as "not stated"; any other plain answer is
followed by the form (app.extraction.prompt), which picks its evidence and writes the short value.
"""

from __future__ import annotations

import re

LOOK = "look"  # where a cell's stored raw answer keeps the plain answer
NOT_ASKED = "not_asked"  # ...or why the field was not asked (the short answer it presupposes is not stated)

NOT_STATED_RE = re.compile(
    r"\b(?:not (?:explicitly |specifically |clearly )?(?:stated|specified|mentioned|provided|given|included|"
    r"defined|set out|indicated|found)|do(?:es)? not (?:explicitly |specifically )?(?:state|specify|mention|say|"
    r"provide|include|contain|set out|indicate|define)|(?:doesn't|don't) (?:state|specify|mention|say)|"
    r"no (?:specific |explicit )?(?:mention|information|renewal|notice period|expiration|effective date|date|term)\b|"
    r"cannot be determined|"
    r"there is no)",
    re.IGNORECASE,
)


def says_not_stated(text: str) -> bool:
    """The answer says the documents do not state it ('not specified in the document', 'there is no
    renewal term'), or is empty."""
    return bool(NOT_STATED_RE.search(text)) or text.strip().lower() in ("", "not stated", "none", "n/a")
