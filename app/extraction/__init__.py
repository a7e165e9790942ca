"""Filling a table from documents: templates, their JSON schema, and the runner that stores checked cells."""
