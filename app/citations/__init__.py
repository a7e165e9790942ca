"""Checking an answer against its documents: citation markers, quotes, claims, numbers, verdicts, passages."""
