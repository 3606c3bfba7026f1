"""Benchmark problems and experiment loops."""
