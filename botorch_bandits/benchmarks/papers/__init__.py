"""The papers' test problems and simulators: the problems (``problems``: RKHS
functions, GP draws, the finite-arm setting), the finite-arm simulator
(``simulator``), the delayed-feedback (``delayed``), piecewise-stationary
(``piecewise``) and long-term-constrained (``constrained``) simulators, and Verma et
al.'s logistic-regression and SVM tuning workloads (``lr_tuning``, ``svm_tuning``)."""
