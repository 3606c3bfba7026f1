"""Helpers the benchmarks share: where their jobs run (``executors``: local worker
processes or a Dask cluster), summaries over seeds (``summary``) and what their
plots share (``plotting``)."""
