"""The documentation's measured figures (``botorch-bandits docs-figures``): the
blocks of the pages rendered from the data files commands wrote
(``docs_figures``)."""
