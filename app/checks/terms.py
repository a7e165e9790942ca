"""Defined terms: where each is defined (quoted, cited), how often it is used, and what is wrong with them.

A definition is a capitalised term in quotes that the text defines: inside brackets after what it
names ('... Inc. (the "Supplier")', '(each a "Party" and together the "Parties")'), before 'means',
'shall mean', 'has the meaning', 'includes' or a colon ('"Affiliate" means ...'), or after 'referred
to as'; in a list of definitions the quotes may be missing ('Territory: means ...', 'Initial Term has
the meaning given in clause 12.1' opening a line). 'The term "Affiliate" shall be limited to ...'
mentions a term, it does not define it. A use is the term as defined, with its plural or singular
and possessive, anywhere but in its own definition.

Problems, each said only when Folio is sure (a false alarm costs a lawyer's trust more than a miss):
- never used: defined, and used nowhere else;
- defined twice: defined in two places of the agreement in different words (a definition in an
  attachment, a separate instrument, does not count; '"X" has the meaning given in Section 2' points
  to a definition, it is not a second one);
- other capitalisation: a term of two or more words written with some of its words in another case
  ('Confidential information'); all lower case is ordinary English and is left alone;
- close to a defined term: a capitalised phrase one or two letters away from a defined term
  ('Acceptence Criteria' for 'Acceptance Criteria');
- not defined: a capitalised phrase used as a term (twice or more, mid-sentence, after 'the',
  'such', 'any' ...) that nothing defines, and that is no heading, party, proper noun or title.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from app.checks.outline import Outline
from app.checks.text import CheckText, Place, word_set

NEVER_USED = "never_used"
DEFINED_TWICE = "defined_twice"
OTHER_CASE = "other_case"
CLOSE_MATCH = "close_match"
NOT_DEFINED = "not_defined"
PROBLEMS = (NEVER_USED, DEFINED_TWICE, OTHER_CASE, CLOSE_MATCH, NOT_DEFINED)

MAX_TERM_WORDS = 8
OPENING_CHARS = 3000  # where the names are introduced, when no numbered clause marks the end of the opening
UNDEFINED_MIN_USES = 2  # uses after 'the', 'such', 'any' ...: a phrase capitalised once is as likely a slip

_SMALL = r"(?:of|and|or|for|the|to|in|on|by|under|&)"

_CAP = r"[A-Z][A-Za-z0-9'’&/-]*"
_TERM = r"[A-Z0-9](?:[^\"\n]|\n(?!\n)){0,78}?"
# Words before the quotes of a definition in brackets: '(the ', '(each a ', '(collectively, the ',
# '(hereinafter referred to as ', '(together with its Affiliates, ' ...
_PAREN_LEAD = re.compile(
    r"^\(\s*(?:(?:the|this|each|each,|an?|collectively|collectively,|individually|individually,|together|jointly|"
    r"hereinafter|hereafter|herein|also|sometimes|referred|to|as|called|being|and|or|such|any|its|their|"
    r"respectively|singly|severally|as\s+applicable)[\s,]*)*$",
    re.IGNORECASE,
)
# '(each such additional period, a "Renewal Term")': lower-case words, then the words that introduce a term.
_LEAD_ENDS = re.compile(
    r"^\((?:[a-z][a-z-]*,?\s+){0,8}(?:the|a|an|each|collectively|together|hereinafter|as|called|respectively),?\s*$"
    r"|^\((?:the|this|each|a|an|collectively|hereinafter|together|individually)\s[a-z ,-]{0,40}$"
)
_QUOTED = re.compile(rf"\"(?P<term>{_TERM})\"")
_MEANS = re.compile(
    r"^\s*[,:]?\s*(?:(?:shall|will|is\s+to|are\s+to)\s+)?(?:mean|means|has\s+the\s+meaning|have\s+the\s+meanings?|"
    r"shall\s+have\s+the\s+meanings?|is\s+defined|are\s+defined|refers?\s+to|is\s+used|shall\s+refer|"
    r"shall\s+be\s+(?:the|a|an|any)\s)\b|^\s*:",
    re.IGNORECASE,
)
# '"Confidential Information" includes ...': adds to a definition (or is one), never a conflicting second one.
_EXTENDS = re.compile(r"^\s*[,:]?\s*(?:(?:shall|will)\s+)?(?:includes?|include|does\s+not\s+include)\b", re.IGNORECASE)
_POINTER = re.compile(
    r"^\s*[,:]?\s*(?:(?:shall|will)\s+)?(?:has|have)\s+the\s+meanings?\s+(?:set\s+forth|given|ascribed|assigned|"
    r"specified|provided|defined|attributed)|^\s*[,:]?\s*(?:is|are|as)\s+defined\s+in\b|^\s*:\s*as\s+defined",
    re.IGNORECASE,
)
_AS = re.compile(
    r"(?:referred\s+to|known|defined|designated|described|identified)\s+(?:herein\s+|hereinafter\s+|below\s+|"
    r"collectively\s+|individually\s+|together\s+)*as\s+(?:the\s+|a\s+|an\s+)?$",
    re.IGNORECASE,
)
_THE_TERM = re.compile(r"\b(?:the|such|a)\s+(?:terms?|words?|phrases?|expressions?)\s*$", re.IGNORECASE)
# 'Territory: means ...', '1.2 Initial Term has the meaning ...', '(c) Products: As defined in Schedule 1'
_LISTED = re.compile(
    rf"(?m)^[ \t]*(?:\d{{1,3}}(?:\.\d{{1,3}})*\.?[ \t]+|\(?[a-z]{{1,3}}[.)][ \t]+)?"
    rf"(?P<term>{_CAP}(?:[ \t]+(?:{_SMALL}[ \t]+)?{_CAP}){{0,5}})"
    r"(?P<how>[ \t]*:[ \t]*(?:means?\b|shall\s+mean\b|[Aa]s\s+defined\b|has\s+the\s+meaning)|"
    r"[ \t]+(?:means|shall\s+mean|has\s+the\s+meaning(?:\s+given|\s+set\s+forth|\s+ascribed)))"
)
# '(Sell-Off Period)' after what it names, without quotes: counted as defining, so the phrase is not
# called undefined; too loose to count as a definition of its own (never used, defined twice).
_SOFT = re.compile(rf"\((?:the[ \t]+|each[ \t]+|a[ \t]+)?(?P<term>{_CAP}(?:[ \t]+(?:{_SMALL}[ \t]+)?{_CAP}){{0,5}})\)")
_DETERMINER = re.compile(r"\b(?:the|such|any|each|this|that|said|every)\s+$")
_PHRASE = re.compile(rf"(?<![\w'’-]){_CAP}(?:[ \t]+(?:{_SMALL}[ \t]+)?{_CAP}){{0,5}}")
# Proper nouns and titles are capitalised without being terms. A phrase that ends in or holds one of
# these is not reported as undefined.
_PROPER = word_set(
    """
    inc incorporated llc l.l.c llp lp ltd limited corp corporation company co plc gmbh ag sa s.a bv nv
    pty bank university association foundation trust partners partnership group holdings state states
    county city street avenue road drive boulevard suite floor building court courts commission
    department government republic kingdom america district province board exchange act code rules
    regulations law laws treaty convention agency authority administration january february march april
    may june july august september october november december monday tuesday wednesday thursday friday
    saturday sunday president officer director directors secretary manager chairman treasurer attorney
    counsel title name signature date by chief executive vice general senior managing principal member
    trustee north south east west northern southern eastern western central new united national
    international federal english french german chinese japanese spanish internet web website email
    e-mail god christmas day commissioner secretary minister ministry registrar court tribunal alabama
    alaska arizona arkansas california colorado connecticut delaware florida georgia hawaii idaho
    illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota
    mississippi missouri montana nebraska nevada hampshire jersey mexico york carolina dakota ohio
    oklahoma oregon pennsylvania rhode tennessee texas utah vermont virginia washington wisconsin
    wyoming columbia canada england wales scotland ireland china japan germany france india australia
    singapore hong kong
    """
)
_NOT_TERM_WORDS = word_set(
    """
    section sections article articles exhibit exhibits schedule schedules annex appendix clause clauses
    paragraph page part i ii iii iv v vi vii viii ix x whereas now therefore witnesseth recitals in
    witness
    """
)


@dataclass(frozen=True)
class Definition:
    term: str
    start: int  # the term's own characters in the text
    end: int
    place: Place
    quote: str  # the sentence that defines it
    pointer: bool = False  # 'has the meaning given in Section 2': points to a definition elsewhere
    part: int = 0
    extends: bool = False  # '"X" includes ...': adds to the definition


@dataclass(frozen=True)
class TermProblem:
    kind: str  # one of PROBLEMS
    term: str  # the defined term, or the phrase found
    note: str  # plain words
    start: int
    end: int
    place: Place
    quote: str
    others: tuple[Place, ...] = ()  # other places it concerns (the second definition, other uses)


@dataclass
class DefinedTerm:
    term: str
    definitions: list[Definition]
    uses: int = 0
    used_at: list[int] = field(default_factory=list)  # first offsets of uses (a few)

    @property
    def first(self) -> Definition:
        return self.definitions[0]


@dataclass
class TermReport:
    terms: list[DefinedTerm]
    problems: list[TermProblem]


def find_definitions(outline: Outline) -> list[Definition]:
    text = outline.text
    found: list[Definition] = []
    taken: set[int] = set()

    def add(term: str, start: int, end: int, pointer: bool = False, extends: bool = False) -> None:
        term = _clean(term)
        if not _term_like(term) or start in taken:
            return
        taken.add(start)
        quote = text.quote(start, end)
        found.append(Definition(term, start, end, text.place(start), quote, pointer, outline.part_of(start), extends))

    body = text.text
    for match in _QUOTED.finditer(body):
        term = match.group("term")
        start, end = match.start("term"), match.end("term")
        after = body[match.end() : match.end() + 80]
        before = body[max(0, match.start() - 200) : match.start()]
        if _THE_TERM.search(before) and not _MEANS.match(after):
            continue  # 'the term "Affiliate" shall not include': a mention
        if _in_definition_brackets(body, match.start(), match.end()):
            add(term, start, end)
        elif _POINTER.match(after):
            add(term, start, end, pointer=True)
        elif _MEANS.match(after) or _AS.search(before[-60:]):
            add(term, start, end)
        elif _EXTENDS.match(after):
            add(term, start, end, extends=True)
    for match in _LISTED.finditer(body):
        term = match.group("term")
        if term.lower() in _NOT_TERM_WORDS or term[:1].islower():
            continue
        pointer = bool(re.search(r"(?i)meaning|defined", match.group("how")))
        add(term, match.start("term"), match.end("term"), pointer=pointer)
    return sorted(found, key=lambda d: d.start)


def _in_definition_brackets(body: str, start: int, end: int) -> bool:
    """Is this quoted term inside '( ... )' whose words before the first quote are only the ones
    definitions use ('(the ', '(each a ', '(collectively, the ')?"""
    opened = body.rfind("(", max(0, start - 120), start)
    if opened == -1 or ")" in body[opened:start]:
        return False
    closing = body.find(")", end)
    if closing == -1 or closing - end > 160:
        return False
    lead = body[opened:start]
    first_quote = lead.find('"')
    lead_words = lead if first_quote == -1 else lead[:first_quote]
    if _PAREN_LEAD.match(lead_words) or _LEAD_ENDS.search(lead_words):
        return True
    # '(each a "Party" and together the "Parties")': a later term in the same brackets.
    return first_quote != -1 and _PAREN_LEAD.match(lead[:first_quote]) is not None


def _clean(term: str) -> str:
    return " ".join(term.strip().strip(" ,.;:?!'’").split())


def _term_like(term: str) -> bool:
    words = term.split()
    if not words or len(words) > MAX_TERM_WORDS or not term[:1].isalnum():
        return False
    if re.search(r"[()\[\]]", re.sub(r"\((?:s|es|ies)\)$", "", term)) or "'" in term.replace("'s", ""):
        return False  # quotes that did not pair up ('"Agreement') dated ... (the"), not a term
    if not term[:1].isupper() and not term[:1].isdigit():
        return False
    if term.isupper() and len(words) > 3:
        return False  # 'AS IS, WITHOUT WARRANTY ...': a quoted phrase in capitals, not a term
    capitalised = [w for w in words if w[:1].isupper() or w[:1].isdigit()]
    return len(capitalised) * 2 >= len(words)


def _forms(term: str) -> list[str]:
    """The term and the forms that count as using it: plural or singular."""
    if term.endswith("(s)"):  # 'Project Plan(s)'
        base = term[:-3]
        return sorted({term, base, base + "s"}, key=len, reverse=True)
    out = {term}
    last = term.split()[-1]
    if last.isupper():
        out.add(term + "s")
    elif last.endswith("ies") and len(last) > 4:
        out.add(term[:-3] + "y")
    elif last.endswith(("ss", "us", "is")):
        out.add(term + "es")
    elif last.endswith("s"):
        out.add(term[:-1])
        if last.endswith("es") and last[-3:-2] in ("s", "x", "z", "h"):
            out.add(term[:-2])
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        out.add(term[:-1] + "ies")
    else:
        out.add(term + "s")
        if last.endswith(("s", "x", "z", "ch", "sh")):
            out.add(term + "es")
    return sorted(out, key=len, reverse=True)


def _pattern(words: str) -> str:
    return r"\s+".join(re.escape(w) for w in words.split())


def check_terms(outline: Outline) -> TermReport:
    text = outline.text
    definitions = find_definitions(outline)
    by_term: dict[str, list[Definition]] = defaultdict(list)
    for d in definitions:
        by_term[d.term].append(d)
    terms = [DefinedTerm(t, ds) for t, ds in by_term.items()]
    defined_spans = {(d.start, d.end) for d in definitions}
    _count_uses(text, terms, defined_spans)
    problems: list[TermProblem] = []
    problems += _never_used(text, terms)
    problems += _defined_twice(text, terms)
    problems += _other_case(text, terms, defined_spans)
    soft = {_key(m.group("term")).lower() for m in _SOFT.finditer(text.text)}
    problems += _phrases(outline, terms, soft)
    problems.sort(key=lambda p: p.start)
    terms.sort(key=lambda t: t.first.start)
    return TermReport(terms, problems)


def _count_uses(text: CheckText, terms: list[DefinedTerm], defined: set[tuple[int, int]]) -> None:
    """One pass over the text with every term's forms, longest first: 'Licensee Users' is a use of
    itself, not of 'Licensee'. A form two terms share ('Party' and 'Parties') is a use of both."""
    if not terms:
        return
    owners: dict[str, list[DefinedTerm]] = defaultdict(list)
    for t in terms:
        for form in _forms(t.term):
            owners[_key(form)].append(t)
    alternatives = sorted(owners, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w])(?:" + "|".join(_pattern(a) for a in alternatives) + r")(?![\w])")
    for match in pattern.finditer(text.text):
        if (match.start(), match.end()) in defined:
            continue
        for term in owners.get(_key(match.group()), []):
            if any(d.start == match.start() for d in term.definitions):
                continue
            term.uses += 1
            if len(term.used_at) < 5:
                term.used_at.append(match.start())


def _key(text: str) -> str:
    return " ".join(text.split())


def _never_used(text: CheckText, terms: list[DefinedTerm]) -> Iterable[TermProblem]:
    redacted = "[***]" in text.text or "***" in text.text
    for t in terms:
        if t.uses or all(d.pointer for d in t.definitions):
            continue
        d = t.first
        note = f"“{t.term}” is defined on {d.place.cited()} and never used"
        if redacted:
            note += " (in the text left: the document has redacted passages)"
        yield TermProblem(NEVER_USED, t.term, note, d.start, d.end, d.place, d.quote)


def _defined_twice(text: CheckText, terms: list[DefinedTerm]) -> Iterable[TermProblem]:
    for t in terms:
        own = [d for d in t.definitions if not d.pointer and not d.extends and d.part == 0]
        if len(own) < 2:
            continue
        first, second = own[0], own[1]
        if _defining_words(text, first) == _defining_words(text, second):
            continue  # the same definition repeated word for word
        note = f"“{t.term}” is defined on {first.place.cited()} and again on {second.place.cited()}"
        if len(own) > 2:
            note += f" (and {len(own) - 2} more)"
        yield TermProblem(DEFINED_TWICE, t.term, note, second.start, second.end, second.place, second.quote,
                          (first.place,))  # fmt: skip


def _defining_words(text: CheckText, d: Definition) -> str:
    first, last = text.sentence(d.start, d.end)
    return " ".join(re.findall(r"\w+", text.text[first:last].lower()))


def _other_case(text: CheckText, terms: list[DefinedTerm], defined: set[tuple[int, int]]) -> Iterable[TermProblem]:
    """'Confidential information' for 'Confidential Information': the words of a multi-word term, some
    in another case (all lower case is ordinary English; all capitals is emphasis). One pass over the
    text with every such term, case ignored."""
    by_key = {t.term.lower(): t for t in terms if len(t.term.split()) >= 2 and not t.term.isupper()}
    if not by_key:
        return
    alternatives = sorted(by_key, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![\w-])(?:" + "|".join(_pattern(a) for a in alternatives) + r")s?(?![\w-])", re.IGNORECASE
    )
    seen: dict[str, list[int]] = defaultdict(list)
    for match in pattern.finditer(text.text):
        found = _key(match.group())
        t = by_key.get(found.lower()) or by_key.get(found.lower()[:-1])
        if t is None or found.startswith(t.term) or (match.start(), match.end()) in defined:
            continue
        words = t.term.split()
        variant = found.split()
        if all(w.islower() for w in variant) or all(w.isupper() for w in variant):
            continue
        if any(v != w and v.isupper() for v, w in zip(variant, words, strict=False)):
            continue  # 'CAPSUGEL Property': a party's name in its capitals, not another spelling
        if _case_at_sentence_start(text, match.start(), variant, words):
            continue
        seen[t.term].append(match.start())
    for t in terms:
        offsets = seen.get(t.term)
        if not offsets:
            continue
        first = offsets[0]
        shown = " ".join(text.text[first : first + len(t.term) + 5].split()[: len(t.term.split())])
        note = f"“{shown}” is written for the defined term “{t.term}”" + (
            f" ({len(offsets)} times)" if len(offsets) > 1 else ""
        )
        end = first + len(shown)
        yield TermProblem(OTHER_CASE, t.term, note, first, end, text.place(first), text.quote(first, end),
                          tuple(text.place(s) for s in offsets[1:5]))  # fmt: skip


def _case_at_sentence_start(text: CheckText, at: int, variant: list[str], words: list[str]) -> bool:
    """Only the first word differs, and it opens a sentence ('Services' at a sentence start)."""
    before = text.text[max(0, at - 3) : at].rstrip(' \t"(')
    if before and not before.endswith((".", ":", ";", "\n", ")")):
        return False  # mid-sentence: a line's start counts as a sentence's (a heading, a list item)
    # 'Franchise agreements providing ...': the lower-case words, capitalised because they open a sentence.
    return all(v.islower() for v in variant[1:]) or [
        k for k, (v, w) in enumerate(zip(variant, words, strict=False)) if v.rstrip("s") != w.rstrip("s")
    ] == [0]


def _phrases(outline: Outline, terms: list[DefinedTerm], soft: set[str]) -> list[TermProblem]:
    """Capitalised phrases mid-sentence: close to a defined term (a typo), or used as a term that
    nothing defines."""
    from rapidfuzz.distance import Levenshtein

    text = outline.text
    known = {_key(f).lower() for t in terms for f in _forms(t.term)}
    exact = {_key(f) for t in terms for f in _forms(t.term)}
    by_length: dict[int, list[str]] = defaultdict(list)
    for t in terms:
        by_length[len(t.term.split())].append(t.term)
    names = _proper_names(outline)
    headings = {c.heading.lower() for c in outline.clauses if c.heading} | {
        a.heading.lower() for a in outline.attachments if a.heading
    }
    uses: dict[str, list[int]] = defaultdict(list)
    determined: Counter[str] = Counter()
    problems: list[TermProblem] = []
    close_done: set[str] = set()
    for match in _PHRASE.finditer(text.text):
        phrase = re.sub(r"['’]s?$", "", _key(match.group()))  # the possessive: 'Licensee's'
        owner, _, rest = phrase.partition(" ")
        if rest and owner.endswith(("'s", "’s")) and owner[:-2].lower() in known | names:
            phrase = rest  # "Discloser's Confidential Information": the phrase after a party's possessive
        if not phrase:
            continue
        words = phrase.split()
        if _key(phrase) in exact or not _mid_sentence(text.text, match.start()):
            continue
        if any(w.isupper() and len(w) > 1 for w in words) or any(ch.isdigit() for ch in phrase):
            continue
        lowered = phrase.lower()
        if lowered in known:
            continue
        # A typo of a defined term: same number of words, one or two letters apart.
        if phrase not in close_done and len(words) >= 2:
            for term in by_length.get(len(words), []):
                if lowered == term.lower() or len(term) < 8:
                    continue
                if Levenshtein.distance(phrase, term) <= (1 if len(term) < 12 else 2) and not _inflection(phrase, term):
                    close_done.add(phrase)
                    problems.append(
                        TermProblem(CLOSE_MATCH, phrase, f"“{phrase}” looks like a slip for the defined term “{term}”",
                                    match.start(), match.end(), text.place(match.start()),
                                    text.quote(match.start(), match.end()))
                    )  # fmt: skip
                    break
        if len(words) < 2 or phrase in close_done or lowered in soft or _not_a_term(phrase, names, headings, known):
            continue
        uses[phrase].append(match.start())
        if _DETERMINER.search(text.text[max(0, match.start() - 12) : match.start()]):
            determined[phrase] += 1
    for phrase, offsets in uses.items():
        if len(offsets) < UNDEFINED_MIN_USES or determined[phrase] < UNDEFINED_MIN_USES:
            continue
        first = offsets[0]
        end = first + len(phrase)
        note = f"“{phrase}” is used as a defined term {len(offsets)} times and defined nowhere"
        others = tuple(text.place(o) for o in offsets[1:5])
        problems.append(
            TermProblem(NOT_DEFINED, phrase, note, first, end, text.place(first), text.quote(first, end), others)
        )
    return problems


def _inflection(phrase: str, term: str) -> bool:
    """'Party's' / 'Parties' for 'Party': not a typo."""
    a, b = phrase.lower(), term.lower()
    return a.rstrip("s'’") == b.rstrip("s'’") or a.replace("ies", "y") == b or b.replace("ies", "y") == a


def _mid_sentence(body: str, at: int) -> bool:
    """After a lower-case word or a comma: not a sentence's, heading's or list item's first word."""
    before = body[max(0, at - 30) : at]
    stripped = before.rstrip(" \t\"'(")
    if not stripped or stripped.endswith(("\n", ".", ":", ";", "?", "!", ")")):
        return False
    last = stripped.split()[-1] if stripped.split() else ""
    return bool(last) and (last[:1].islower() or last.endswith(","))


def _not_a_term(phrase: str, names: set[str], headings: set[str], known: set[str]) -> bool:
    lowered = phrase.lower()
    words = [w.strip(".,'’").lower() for w in phrase.split()]
    if any(w in _PROPER or w in _NOT_TERM_WORDS for w in words):
        return True
    if lowered in headings or any(lowered in h for h in headings):
        return True
    if any(w in names for w in words if len(w) > 2):
        return True
    # 'Licensee Mobile Apps': a defined term (or party) at its start, and more after it, is judged by the rest.
    return any(lowered.startswith(k + " ") or lowered.endswith(" " + k) for k in known)


def _proper_names(outline: Outline) -> set[str]:
    """Words of the names the document introduces before its first clause (parties, places, the
    title), lower case: a phrase made of them is a name, not a term."""
    text = outline.text
    first = min((c.start for c in outline.clauses if c.part == 0), default=OPENING_CHARS)
    opening = text.text[:first]
    names: set[str] = set()
    for match in _PHRASE.finditer(opening):
        for word in match.group().split():
            names.add(word.strip(".,'’").lower())
    return names - {"agreement", "the", "this"}
