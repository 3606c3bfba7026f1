"""The papers' simulators and the benchmarks, in rooms by purpose: ``papers`` (the
papers' test problems and simulators), ``reproduction`` (the experiments, their runner,
the claims and REPRODUCTION.md), ``ax_benchmark`` and ``online_benchmark`` (through
``ax.Client``), ``demos``, ``studies`` (a question each), ``figures`` (the docs'
measured figures) and ``common`` (where jobs run, summaries over seeds). Library
code never imports them. The modules' paths before issue 47 (when all lay directly in
this folder) still import, for one release, as their new modules (:data:`MOVED`),
with a ``DeprecationWarning`` naming the new path."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

#: a module's name before issue 47 (under this package) -> its name now
MOVED: dict[str, str] = {
    "problems": "papers.problems",
    "simulator": "papers.simulator",
    "constrained": "papers.constrained",
    "delayed": "papers.delayed",
    "piecewise": "papers.piecewise",
    "hyperparameters": "papers.lr_tuning",
    "experiments": "reproduction.experiments",
    "families": "reproduction.families",
    "reproduce": "reproduction.runner",
    "result": "reproduction.result",
    "output": "reproduction.output",
    "plots": "reproduction.plots",
    "calibration": "reproduction.calibration",
    "cpd_tuning": "reproduction.cpd_tuning",
    "claims": "reproduction.claims",
    "report": "reproduction.report",
    "report_data": "reproduction.report_data",
    "stats": "reproduction.stats",
    "ax_bench": "ax_benchmark.runner",
    "ax_bench_problems": "ax_benchmark.problems",
    "ax_bench_results": "ax_benchmark.results",
    "ax_bench_strategies": "ax_benchmark.strategies",
    "ax_bench_suite": "ax_benchmark.suite",
    "ax_bench_tuning": "ax_benchmark.tuning",
    "ax_checks": "ax_benchmark.checks",
    "online": "online_benchmark.runner",
    "online_calibration": "online_benchmark.calibration",
    "ax_demo": "demos.ax_demo",
    "ax_demo_report": "demos.ax_demo_report",
    "demo": "demos.loop_demo",
    "docs_figures": "figures.docs_figures",
    "ts_where": "studies.ts_where",
    "ts_variance": "studies.ts_variance",
    "botorch_loop": "studies.botorch_loop",
    "fit_quality": "studies.fit_quality",
    "fitted_beta": "studies.fitted_beta",
    "engine": "studies.engine",
    "batch": "studies.batch",
    "executors": "common.executors",
}


class _MovedModules(MetaPathFinder, Loader):
    """Imports an old path of :data:`MOVED` as its new module (the very module
    object, so the same functions and classes), with a ``DeprecationWarning``."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        """A spec for an old path of this package; ``None`` for any other name."""
        package, _, name = fullname.rpartition(".")
        if package != __name__ or name not in MOVED:
            return None
        return ModuleSpec(fullname, self)

    def create_module(self, spec: ModuleSpec) -> None:
        """Python's default placeholder module (``exec_module`` replaces it)."""
        return None

    def exec_module(self, module: ModuleType) -> None:
        """Warn, then put the new module in ``sys.modules`` under the old name (the
        import system returns what ``sys.modules`` holds after this call)."""
        old = module.__name__
        new = f"{__name__}.{MOVED[old.rpartition('.')[2]]}"
        warnings.warn(
            f"`{old}` moved to `{new}` (issue 47); import it from there: the old "
            "path will be removed in the next release.",
            DeprecationWarning,
            stacklevel=2,  # the importing line (the import system's frames skipped)
        )
        sys.modules[old] = importlib.import_module(new)


if not any(type(f).__name__ == "_MovedModules" for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())
