"""Child processes that keep MuPDF off the window's threads: the pool, the ingest reader, page drawing."""
