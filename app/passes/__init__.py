"""Questions beyond one context: a document read in passes of consecutive pages, documents answered one
by one, or the pages a word search ranks highest; the answers grounded, merged and stored as one turn
whose footer says exactly what the model read."""
