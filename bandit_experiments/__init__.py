"""The experiments around botorch_bandits, run from a clone of the repository (the
wheel does not install them): ``reproduction`` (the papers' experiments, their runner,
the claims and REPRODUCTION.md), ``ax_benchmark`` and ``online_benchmark`` (through
``ax.Client``), ``studies`` (a question each), ``figures`` (the docs' measured figures
and pictures), ``common`` (where jobs run, summaries over seeds) and ``cli`` (the
research commands: ``python -m bandit_experiments COMMAND``). They import the library;
the library never imports them."""
