"""The reproductions of the papers' experiments (``python -m bandit_experiments reproduce`` and
``reproduction-report``): the experiments by name (``experiments``), the simulator
families that run them (``families``), the runner (``runner``) and what it writes
(``result``, ``output``, ``plots``), the change-point detector's tuning
(``cpd_tuning``, ``calibration``, ``detector``), and REPRODUCTION.md: its data (``report_data``,
``stats``), the claims' rules (``claims``) and the document (``report``)."""
