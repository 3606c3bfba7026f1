"""Helpers the benchmarks share: where their jobs run (``executors``: local worker
processes or a Dask cluster) and summaries over seeds (``summary``)."""
