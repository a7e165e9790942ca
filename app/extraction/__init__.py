"""Filling a table from documents: templates, requests and their JSON schema, grounded cells, reviews."""
