"""The demos: the main job (``ax_demo``, ``botorch-bandits demo``: an asynchronous,
resumable Ax experiment against Ax's default strategy) with its results and plots
(``ax_demo_report``) and its asynchronous loop on a virtual clock (``async_loop``,
which the online benchmark runs too), and the plain BoTorch loop of IGP-UCB, GP-TS
and GP-UCB on an RKHS function (``loop_demo``, ``botorch-bandits loop-demo``)."""
