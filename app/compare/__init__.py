"""Comparing two versions of a document: a deterministic, complete redline.

`versions.py` reads a version (stored segments, or a file through ingest) as text blocks with their
pages; `words.py` turns blocks into the words compared (running headers, page numbers and line-end
hyphenation removed); `clauses.py` cuts the words into numbered clauses; `align.py` pairs old and new
clauses (numbers and headings, then similarity) and finds moves; `word_diff.py` compares the words of
a pair (sentence by sentence first when long); `redline.py` builds the list of
changes with anchors in both versions; `apply.py` rebuilds the new text from the old text and that
list alone, the proof that no change was dropped; `markdown.py` writes the redline for people.
"""
