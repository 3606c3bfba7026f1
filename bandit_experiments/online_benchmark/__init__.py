"""The online benchmark (``python -m bandit_experiments ax-online``): drifting objectives, delayed
evaluations and a cost budget through ``ax.Client`` -- the problems, jobs and tables
(``runner``) and the change-point detector's calibration on them
(``calibration``)."""
