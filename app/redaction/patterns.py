"""Personal and financial data found by its shape: e-mail addresses, phone numbers, IBANs, bank
account and card numbers, US social security numbers, national identity numbers, dates of birth
and amounts with a currency.

Plain text in, spans out: no PDF here (app/redaction/pagetext.py gives each page's text with the
box of every character). Where a number carries a checksum it is checked (IBAN mod 97, card Luhn,
Canadian SIN Luhn, Spanish DNI/NIE letter, Italian codice fiscale, French NIR key 97), so a
sixteen-digit reference that fails Luhn is not offered as a card. Numbers without a checksum (a
bank account, a passport) are taken only after a word that names them ("Account No.", "SSN").
Text reaches these patterns with line ends as '\n' and a line-end hyphen kept, so '\\s' also
matches a line break: an IBAN or a phone number split over two lines is one match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from app.redaction.kinds import (
    ACCOUNT,
    AMOUNT,
    BIRTH_DATE,
    CARD,
    EMAIL,
    IBAN,
    NATIONAL_ID,
    PATTERN_KINDS,
    PHONE,
    SSN,
)


@dataclass(frozen=True)
class Match:
    kind: str
    start: int
    end: int  # text[start:end] is the data itself, without the words that named it


# -- checksums -----------------------------------------------------------------------------------
def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# IBAN length per country (ISO 13616 registry, the SEPA countries and the other common ones).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24,
    "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21,
    "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
    "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27,
    "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24,
    "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23,
    "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_ok(text: str) -> bool:
    compact = re.sub(r"\s", "", text).upper()
    if IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in moved)
    return int(number) % 97 == 1


def card_ok(digits: str) -> bool:
    """A payment card number: 13-19 digits, an issuer's prefix, and Luhn."""
    if not 13 <= len(digits) <= 19 or not luhn_ok(digits):
        return False
    two, four = int(digits[:2]), int(digits[:4])
    return (
        digits[0] == "4"  # Visa
        or 51 <= two <= 55
        or 2221 <= four <= 2720  # Mastercard
        or two in (34, 37)  # American Express
        or digits.startswith(("6011", "65", "644", "645", "646", "647", "648", "649"))  # Discover
        or 3528 <= four <= 3589  # JCB
        or two in (36, 38, 30)  # Diners
        or digits.startswith("62")  # UnionPay
    )


_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def dni_ok(text: str) -> bool:
    """Spanish DNI (8 digits + letter) or NIE (X/Y/Z + 7 digits + letter)."""
    compact = re.sub(r"[\s-]", "", text).upper()
    if compact[0] in "XYZ":
        compact = str("XYZ".index(compact[0])) + compact[1:]
    return compact[:-1].isdigit() and _DNI_LETTERS[int(compact[:-1]) % 23] == compact[-1]


_CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]


def codice_fiscale_ok(text: str) -> bool:
    code = text.upper()
    total = 0
    for i, ch in enumerate(code[:15]):
        value = int(ch) if ch.isdigit() else ord(ch) - ord("A")
        total += _CF_ODD[value] if i % 2 == 0 else value
    return chr(ord("A") + total % 26) == code[15]


def nir_ok(text: str) -> bool:
    """French social security number (NIR): 13 digits and a two-digit key, 97 - n mod 97 (Corsica's
    2A/2B department counted as 19/18)."""
    compact = re.sub(r"\s", "", text).upper()
    body, key = compact[:13], compact[13:]
    body = body.replace("2A", "19").replace("2B", "18")
    return body.isdigit() and key.isdigit() and 97 - int(body) % 97 == int(key)


def aba_ok(digits: str) -> bool:
    """A US bank routing (ABA) number's checksum."""
    if len(digits) != 9:
        return False
    d = [int(c) for c in digits]
    return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + d[2] + d[5] + d[8]) % 10 == 0


# -- the patterns --------------------------------------------------------------------------------
_SEP = r"[ \t\n.\-\u2010\u2011]"  # what people put between groups of digits (dot, hyphen, space, line break)

EMAIL_RE = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b")

# International (+44 20 7946 0958, +1 (415) 555-0132) or national with an area code in brackets or
# three groups ((212) 555-0199, 415-555-0132, 020 7946 0958). The digit count is checked below.
PHONE_RE = re.compile(
    rf"(?<![\w+/.,-])(?:"
    rf"\+\d{{1,3}}{_SEP}?(?:\(0?\d{{1,4}}\){_SEP}?)?\d{{1,5}}(?:{_SEP}?\d{{2,5}}){{1,4}}"
    rf"|\(\d{{2,5}}\){_SEP}?\d{{2,5}}(?:{_SEP}\d{{2,5}}){{1,3}}"
    rf"|0\d{{1,4}}{_SEP}\d{{2,5}}(?:{_SEP}\d{{2,5}}){{1,3}}"
    rf"|[2-9]\d{{2}}[.\-]\d{{3}}[.\-]\d{{4}}"
    rf")(?![\w-]|[.,]\d)"
)
PHONE_DIGITS = (9, 15)
# Words before a number that make a short or unusual layout a phone number all the same.
PHONE_WORDS = re.compile(r"(?:tel(?:ephone)?|phone|mobile|cell|fax|ph\.?|t\.|m\.)\s*(?:no\.?|number|#)?[:.]?\s*$", re.I)

IBAN_RE = re.compile(r"\b[A-Z]{2}\d{2}(?:[ \n]?[A-Z0-9]{4}){2,7}(?:[ \n]?[A-Z0-9]{1,4})?\b")

CARD_RE = re.compile(
    r"(?<![\d.,-])\d{4}(?:[ \n\-]?\d{4}){2}[ \n\-]?\d{1,7}(?![\d-])"
    r"|(?<![\d.,-])3[47]\d{2}[ \n\-]?\d{6}[ \n\-]?\d{5}(?!\d)"
)

SSN_RE = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?![\d-])")
SSN_WORDS = re.compile(r"(?:SSN|social security(?: number| no\.?)?|SS#)\s*[:#]?\s*$", re.I)
BARE_NINE = re.compile(r"(?<!\d)\d{9}(?!\d)")

# Account numbers have no checksum of their own: taken after the words that name them.
ACCOUNT_RE = re.compile(
    r"\b(?:(?:bank\s+)?account|acct\.?|a/c|routing|ABA|sort\s+code|BSB)\s*(?:no\.?|number|#|nr\.?)?\s*[:#]?\s*"
    r"(?P<value>\d[\d \-]{4,22}\d)(?!\d)",
    re.I,
)
PASSPORT_RE = re.compile(
    r"\b(?:passport|driver'?s?\s+licen[cs]e|ID\s+card|identity\s+card|EIN|employer\s+identification|TIN|tax\s+ID)"
    r"\s*(?:no\.?|number|#)?\s*[:#]?\s*(?P<value>[A-Z0-9][A-Z0-9\-]{5,14}[0-9])\b",
    re.I,
)

NINO_RE = re.compile(r"\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b")
DNI_RE = re.compile(r"\b(?:\d{8}|[XYZ]\d{7})-?[A-Z]\b")
CF_RE = re.compile(r"\b[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z]\b")
SIN_RE = re.compile(r"(?<![\d-])[1-7]\d{2}([- ])\d{3}\1\d{3}(?![\d-])")
NIR_RE = re.compile(r"\b[12] ?\d{2} ?(?:0[1-9]|1[0-2]) ?(?:\d{2}|2A|2B) ?\d{3} ?\d{3} ?\d{2}\b")

_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
DATE = (
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTHS},?\s+\d{{4}}"
    rf"|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    r"|\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})"
    r"|\d{4}-\d{2}-\d{2})"
)
BIRTH_RE = re.compile(
    rf"\b(?:born(?:\s+on)?|date\s+of\s+birth|birth\s*date|DOB|D\.O\.B\.|birthday)\s*[:,]?\s*(?:on\s+)?(?P<value>{DATE})",
    re.I,
)

_CURRENCY_WORDS = (
    r"(?:US\s?dollars?|U\.S\.\s?dollars?|dollars?|euros?|pounds?(?:\s+sterling)?|francs?|yen|"
    r"USD|EUR|GBP|CHF|JPY|CAD|AUD|NZD|SEK|NOK|DKK|CNY|INR)"
)
_NUMBER = r"\d{1,3}(?:[,.\u00a0\u202f ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_SCALE = r"(?:\s?(?:million|billion|thousand|mn|bn|m|k)\b)?"
AMOUNT_RE = re.compile(
    rf"(?:(?<![\w$€£¥])(?:US\$|C\$|A\$|[$€£¥]|(?:USD|EUR|GBP|CHF|JPY|CAD|AUD)\s?)\s?(?:{_NUMBER}){_SCALE}"
    rf"|(?<![\w.,])(?:{_NUMBER}){_SCALE}\s?(?:{_CURRENCY_WORDS}|[€£$])(?!\w))"
)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _emails(text: str) -> Iterator[Match]:
    for m in EMAIL_RE.finditer(text):
        yield Match(EMAIL, m.start(), m.end())


def _phones(text: str) -> Iterator[Match]:
    for m in PHONE_RE.finditer(text):
        value = m.group(0).rstrip(".-")
        count = len(_digits(value))
        named = bool(PHONE_WORDS.search(text[max(0, m.start() - 24) : m.start()]))
        if PHONE_DIGITS[0] <= count <= PHONE_DIGITS[1] or (named and 7 <= count <= 15):
            yield Match(PHONE, m.start(), m.start() + len(value))


def _ibans(text: str) -> Iterator[Match]:
    for m in IBAN_RE.finditer(text):
        if iban_ok(m.group(0)):
            yield Match(IBAN, m.start(), m.end())


def _cards(text: str) -> Iterator[Match]:
    for m in CARD_RE.finditer(text):
        if card_ok(_digits(m.group(0))):
            yield Match(CARD, m.start(), m.end())


def _ssns(text: str) -> Iterator[Match]:
    for m in SSN_RE.finditer(text):
        yield Match(SSN, m.start(), m.end())
    for m in BARE_NINE.finditer(text):  # 123456789 only right after "SSN"
        if SSN_WORDS.search(text[max(0, m.start() - 32) : m.start()]):
            yield Match(SSN, m.start(), m.end())


def _accounts(text: str) -> Iterator[Match]:
    for m in ACCOUNT_RE.finditer(text):
        value = m.group("value").rstrip(" -")
        if len(_digits(value)) >= 6:
            yield Match(ACCOUNT, m.start("value"), m.start("value") + len(value))


def _national_ids(text: str) -> Iterator[Match]:
    checks: list[tuple[re.Pattern[str], Callable[[str], bool] | None]] = [
        (NINO_RE, None),
        (DNI_RE, dni_ok),
        (CF_RE, codice_fiscale_ok),
        (SIN_RE, lambda s: luhn_ok(_digits(s))),
        (NIR_RE, nir_ok),
    ]
    for pattern, ok in checks:
        for m in pattern.finditer(text):
            if ok is None or ok(m.group(0)):
                yield Match(NATIONAL_ID, m.start(), m.end())
    for m in PASSPORT_RE.finditer(text):
        yield Match(NATIONAL_ID, m.start("value"), m.end("value"))


def _birth_dates(text: str) -> Iterator[Match]:
    for m in BIRTH_RE.finditer(text):
        yield Match(BIRTH_DATE, m.start("value"), m.end("value"))


def _amounts(text: str) -> Iterator[Match]:
    for m in AMOUNT_RE.finditer(text):
        value = m.group(0).rstrip()
        if any(ch.isdigit() for ch in value):
            yield Match(AMOUNT, m.start(), m.start() + len(value))


FINDERS: dict[str, Callable[[str], Iterator[Match]]] = {
    EMAIL: _emails,
    PHONE: _phones,
    IBAN: _ibans,
    ACCOUNT: _accounts,
    CARD: _cards,
    SSN: _ssns,
    NATIONAL_ID: _national_ids,
    BIRTH_DATE: _birth_dates,
    AMOUNT: _amounts,
}
# Where two kinds claim the same characters, the surer one stays: a checksum beats a shape, a
# named number beats a bare one, and an amount (the loosest shape) gives way to all of them.
PRIORITY = (IBAN, CARD, SSN, NATIONAL_ID, ACCOUNT, EMAIL, BIRTH_DATE, PHONE, AMOUNT)


def find_patterns(text: str, kinds: tuple[str, ...] = PATTERN_KINDS) -> list[Match]:
    """Every match of the chosen kinds, overlaps settled by PRIORITY, in text order."""
    found: list[Match] = []
    for kind in sorted(kinds, key=PRIORITY.index):
        for match in FINDERS[kind](text):
            if match.end > match.start and not any(
                match.start < other.end and other.start < match.end for other in found
            ):
                found.append(match)
    return sorted(found, key=lambda m: m.start)
