"""Every seed the package derives, in one place: the per-round seed of a run
(``step_seed``), the sub-streams of a Thompson-sampling draw (``derived_seed``)
and the uniform draws of GP-UCB-CPD (``uniform_choice``)."""

from __future__ import annotations

import numpy as np

#: a run's seed and a round give the round's seed ``(seed * STEP + t) mod 2**62``
STEP = 1_000_003
_WRAP = 2**62
_MASK64 = 2**64 - 1
#: sub-streams of a draw's seed: a later draw, its observation noise, its member;
#: of a decision's seed: the optimizer's raw samples, its choice of starts, the
#: trust region's centres of the raw samples, and a pending rule's imputations
DRAW, NOISE, MEMBER, RAW_SAMPLES, STARTS, TRUST_CENTRES = 1, 2, 3, 4, 5, 6
IMPUTATION = 7


def step_seed(seed: int, t: int) -> int:
    """The seed of round (or position) ``t`` of a run seeded ``seed``:
    ``(seed * 1_000_003 + t) mod 2**62`` (distinct rounds, distinct seeds).

    Args:
        seed: The run's seed.
        t: The round (or position) index.

    Returns:
        The round's seed, in ``[0, 2**62)``.
    """
    return (int(seed) * STEP + int(t)) % _WRAP


def _mix64(x: int) -> int:
    """SplitMix64's finalizer: a bijection of the 64-bit integers that scatters
    nearby inputs over the whole range."""
    x &= _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def derived_seed(seed: int, *keys: int) -> int:
    """The seed of sub-stream ``keys`` of ``seed`` (e.g. ``(DRAW, k)``: draw ``k``).

    Derived seeds lie in ``[2**63, 2**64)``, so none equals a seed a user passes
    below ``2**63`` (draw ``k`` of seed 0 is not draw 0 of seed ``k``); distinct
    ``(seed, keys)`` give distinct seeds but for chance (about ``2**-63`` a pair).

    Args:
        seed: The parent seed.
        *keys: The sub-stream's keys, mixed in order (SplitMix64's finalizer on each),
            e.g. :data:`DRAW`, :data:`NOISE`, :data:`MEMBER`, :data:`RAW_SAMPLES`,
            :data:`STARTS`, :data:`TRUST_CENTRES` and an index.

    Returns:
        The derived seed, in ``[2**63, 2**64)``.
    """
    x = seed
    for key in keys:
        x = _mix64(x + 0x9E3779B97F4A7C15 * (key + 1))
    return x | (1 << 63)


def uniform_choice(seed: int, position: int, n: int) -> int:
    """A uniform index in ``range(n)`` for the trial at ``position`` of a run seeded
    ``seed`` (numpy's generator seeded with ``[seed, position]``): the same index
    wherever and whenever it is recomputed.

    Args:
        seed: The run's seed.
        position: The trial's position in the run.
        n: The number of choices (``>= 1``).

    Returns:
        An index in ``range(n)``.
    """
    return int(np.random.default_rng([int(seed), int(position)]).integers(n))
