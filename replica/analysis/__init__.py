"""Analyses built on the solved models: :mod:`.transitions` locates the models' phase transitions
and crossovers, :mod:`.asymptotics` derives the large-alpha series of the low-rank model, and
:mod:`.phase_diagram` draws the phase diagrams (PNG + CSV). The generic numerical methods they use
(limits, kinks, continuation, boundary tracing) are in :mod:`replica.numerics.continuation`.
"""
