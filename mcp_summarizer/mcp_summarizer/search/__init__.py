"""`search`: the best-matching exact passages of one stored source, ranked by BM25."""
