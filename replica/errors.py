"""Typed errors of the workbench.

Two kinds of failure reach a user, and the command line maps each to its own exit status:

* :class:`ParameterError` -- bad input (a non-number, a value outside its domain, a covariance that
  is not PSD, a ridgeless solve at the interpolation threshold ...). Exit status 2, one line that
  names the parameter.
* :class:`ConvergenceError` -- a well-posed solve that did not converge. Exit status 3, one line that
  says what was tried.
"""

from __future__ import annotations


class ReplicaError(Exception):
    """Base class of the errors the command line turns into a one-line message."""

    exit_status = 1


class ParameterError(ReplicaError, ValueError):
    """A user-supplied parameter is malformed or outside the model's domain.

    ``parameter`` names the offending parameter as the user typed it (``--alpha``, ``alpha``).
    """

    exit_status = 2

    def __init__(self, parameter: str, message: str):
        self.parameter = parameter
        super().__init__(f"{parameter}: {message}")


class ConvergenceError(ReplicaError, ArithmeticError):
    """A solver did not converge; ``tried`` says what was attempted, ``status`` (a
    :class:`replica.numerics.result.Status` value such as ``"max-iterations"``) what happened."""

    exit_status = 3

    def __init__(self, message: str, tried: str = "", status: str = "stalled"):
        self.tried = tried
        self.status = getattr(status, "value", status)
        text = message if not tried else f"{message} (tried: {tried})"
        super().__init__(text)


def did_you_mean(name: str, choices) -> str:
    """``" (did you mean 'x'?)"`` with the choice closest to ``name`` (``difflib``, ratio at
    least 0.6), or ``""`` when none is close."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def keywords_checked(error, label: str | None = None, also=(), sets_itself=()):
    """Decorator of a function or a class: a call with a keyword argument that the function (the
    class's ``__init__``) does not take raises ``error(message)`` -- one line naming the keyword,
    the closest accepted one (:func:`did_you_mean`) and every accepted one -- instead of Python's
    ``TypeError: ... got an unexpected keyword argument``. A function that takes ``**kw`` and
    passes them on names the callables (or classes) that receive them in ``also``, in the
    order they pass them on (their named parameters are accepted too; a checked one brings its
    own ``also``); without ``also`` such a function's extra keywords are not checked.
    ``sets_itself``: keywords of those callables that the function gives them itself (a caller
    may not).
    Positional arguments and every accepted keyword behave exactly as before. ``label``: how
    the message names the callable (default its name and ``()``)."""
    import functools
    import inspect

    def accepted_by(function) -> tuple[set, bool]:
        function = function.__init__ if isinstance(function, type) else function
        if hasattr(function, "accepted_keywords"):  # checked itself: with its own ``also``
            return function.accepted_keywords()
        params = inspect.signature(function).parameters.values()
        names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        return names - {"self"}, any(p.kind == p.VAR_KEYWORD for p in params)

    def decorate(target):
        function = target.__init__ if isinstance(target, type) else target
        shown = label or f"{target.__name__}()"
        cache = []

        def accepted():  # (names, whether the last receiver takes any keyword), once
            if not cache:
                names, open_ended = accepted_by(function)
                for other in also:
                    more, open_ended = accepted_by(other)
                    names |= more
                cache.append((names - set(sets_itself), open_ended))
            return cache[0]

        @functools.wraps(function)
        def checked(*args, **kwargs):
            names, open_ended = accepted()
            if not open_ended:
                for key in kwargs:
                    if key not in names:
                        raise error(f"{shown}: unknown keyword {key!r}"
                                    f"{did_you_mean(key, names)}; it takes "
                                    f"{', '.join(sorted(names)) or 'no keywords'}")
            return function(*args, **kwargs)

        checked.accepted_keywords = accepted
        if isinstance(target, type):
            target.__init__ = checked
            return target
        return checked

    return decorate
