"""The demos: the main job (``ax_demo``, ``botorch-bandits demo``: an asynchronous,
resumable Ax experiment against Ax's default strategy) with its record of a run's
options (``ax_demo_options``), its results and plots (``ax_demo_report``,
``plotting``) and its asynchronous loop on a virtual clock (``async_loop``, which the
repository's online benchmark runs too); the plain BoTorch loop of IGP-UCB, GP-TS and
GP-UCB on an RKHS function (``loop_demo``, ``botorch-bandits loop-demo``); and the
mean and standard error over seeds they report (``summary``)."""
