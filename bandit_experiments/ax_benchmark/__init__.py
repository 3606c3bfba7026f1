"""The Ax benchmark (``python -m bandit_experiments ax-bench``): the bandit strategies against Ax's
default through ``ax.Client`` on test functions and tuning tasks -- the runner and its
kept jobs (``runner``), the problems (``problems``, the scikit-learn tasks in
``tuning``, the development and validation halves in ``suite``), the strategies
(``strategies``) and the results (``results``); also the papers' problems through
``ax.Client`` (``checks``, ``python -m bandit_experiments ax-check``)."""
