"""The names of the kinds of personal data app/redaction/patterns.py finds, apart from its patterns:
`folio redact --help` names them, and building the CLI's parser for every command must not compile the
patterns (16 ms of `folio list`'s start)."""

from __future__ import annotations

EMAIL = "email"
PHONE = "phone"
IBAN = "iban"
ACCOUNT = "account"
CARD = "card"
SSN = "ssn"
NATIONAL_ID = "national_id"
BIRTH_DATE = "birth_date"
AMOUNT = "amount"

PATTERN_KINDS = (EMAIL, PHONE, IBAN, ACCOUNT, CARD, SSN, NATIONAL_ID, BIRTH_DATE, AMOUNT)
