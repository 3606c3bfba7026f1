"""The documentation's measured figures (``python -m bandit_experiments docs-figures``): the
blocks of the pages rendered from the data files commands wrote
(``docs_figures``)."""
