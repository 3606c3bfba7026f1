"""The decision's steps, in the order :func:`~botorch_bandits.core.decide.pipeline`
runs them: restarts (``restarts``), long-term constraints' multipliers
(``constraints``), what the model sees (``data``), the model (``model``), repeats
(``avoid``), the running trials' stand-ins (``pending``), the rule (``rule``) and
the maximizer (``maximize``). Each step reads and writes its fields of a
:class:`~botorch_bandits.core.round.Round`; a new extension is a new step."""
