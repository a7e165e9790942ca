"""The `folio` commands (`python -m app.cli`): parsing, the work commands, doctor, the self-test."""
