"""What is kept in SQLite and beside it: the database, the library, conversations, search, the audit log."""
