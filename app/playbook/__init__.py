"""Playbook review: a contract checked against a firm's standard positions, rule by rule.

`book.py` holds the playbook format (rules over extraction fields) and its store; `values.py` decides a
value rule by code on the value the model read (durations, amounts, places), never by the model's
arithmetic; `review.py` runs the playbook's fields through the extraction runner (the document read
once, every request through `Session.run`), decides each rule, stores and audits the review
(app/store/playbook.py) and takes a reviewer's accept or reject of each finding; `report.py` writes the
Markdown report and the edits the .docx export proposes.
"""
