"""Studies, each answering one question with its own command: the finite-arm engine's
drift and speed (``engine``), GP-TS's sampler variance (``ts_variance``), batch
against sequential BO (``batch``), a plain BoTorch loop on the Ax benchmark's
problems (``botorch_loop``), where practical GP-TS pays (``ts_where``), how well a
refit finds the likelihood's optimum (``fit_quality``), what B, R, δ and β come to
on fitted models (``fitted_beta``) and a new user's censoring trap (``censor_trap``)."""
