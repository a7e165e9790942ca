"""Redaction that removes: candidates (patterns, names, a user's terms, marked areas), the redacted copy
written by PyMuPDF with what hides in the file taken out, and the proof that nothing redacted is left."""
