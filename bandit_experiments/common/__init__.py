"""Helpers the benchmarks share: where their jobs run (``executors``: local worker
processes or a Dask cluster) and how their tables summarize seeds (``summary``).
What their plots share is the library's :mod:`botorch_bandits.demo.plotting`."""
