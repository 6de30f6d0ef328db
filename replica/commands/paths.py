"""Output and cache paths, checked before any work starts.

A command that writes a file (``sweep -o FILE``) or into a folder (``phase-diagram -o DIR``,
``check -o DIR``, ``appendix -o DIR``, ``--cache DIR``) checks its path first, so that an unusable
one -- an empty string, a folder where a file is needed or a file where a folder is, a device, a
missing or read-only parent, a folder that refuses new files (``/proc``; probed by creating and
removing a file there) -- is exit 2 at once, not an internal error after minutes of work.
Nothing is overwritten silently: an existing output file (or, in a folder, an existing file the
command would write) is refused unless ``--force`` is given.
"""

from __future__ import annotations

import contextlib
import os
import stat

from ..errors import ParameterError


def _nonempty(path, option: str) -> str:
    text = "" if path is None else str(path)
    if not text.strip():
        raise ParameterError(option, "is empty; give a path")
    return text


def _existing_ancestor(path: str) -> str:
    """The nearest folder above ``path`` that exists (the folder ``os.makedirs`` would start
    from)."""
    here = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(here):
        up = os.path.dirname(here)
        if up == here:
            break
        here = up
    return here


def _probe(folder: str, option: str) -> None:
    """Create and remove a file in the existing ``folder``: permission bits (which a superuser
    bypasses) do not show a folder that refuses new entries, such as ``/proc`` or a read-only
    mount, so the check asks the file system itself."""
    import tempfile

    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".replica-probe-")
    except OSError as exc:
        raise ParameterError(option, f"cannot create files in folder {folder!r}: "
                                     f"{exc.strerror or exc}") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)


def check_output_file(path, option: str = "--output", force: bool = False, *,
                      create_parents: bool = False) -> str:
    """``path`` if a file can be written there, else :class:`ParameterError` (exit 2).

    Refused: an empty path, a folder, anything but a regular file (``/dev/full``), an existing
    file without ``force``, a missing parent folder (unless ``create_parents``) or one that
    cannot be written to."""
    path = _nonempty(path, option)
    if os.path.isdir(path):
        raise ParameterError(option, f"{path!r} is a folder; a file name is needed")
    if os.path.lexists(path):
        mode = os.stat(path).st_mode if os.path.exists(path) else 0
        if not stat.S_ISREG(mode):
            raise ParameterError(option, f"{path!r} is not a regular file")
        if not force:
            raise ParameterError(option, f"{path!r} exists (pass --force to overwrite)")
        if not os.access(path, os.W_OK):
            raise ParameterError(option, f"{path!r} is not writable")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        if not create_parents:
            raise ParameterError(option, f"folder {os.path.dirname(path) or parent!r} does "
                                         "not exist")
        parent = _existing_ancestor(path)
        if not os.path.isdir(parent):
            raise ParameterError(option, f"{parent!r} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ParameterError(option, f"folder {parent!r} is not writable")
    _probe(parent, option)
    return path


def check_output_dir(path, option: str = "--out", files=(), force: bool = False) -> str:
    """``path`` if a folder can be created or written there, else :class:`ParameterError`.

    Refused: an empty path, an existing file (or other non-folder) at ``path`` or above it, a
    folder that cannot be written to, and -- unless ``force`` -- any of ``files`` (names inside
    the folder) that exists already."""
    path = _nonempty(path, option)
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise ParameterError(option, f"{path!r} exists and is not a folder")
        if not os.access(path, os.W_OK | os.X_OK):
            raise ParameterError(option, f"folder {path!r} is not writable")
        if not force:
            there = [f for f in files if os.path.lexists(os.path.join(path, f))]
            if there:
                more = f" (and {len(there) - 1} more)" if len(there) > 1 else ""
                raise ParameterError(option, f"{os.path.join(path, there[0])!r}{more} exists "
                                             "(pass --force to overwrite)")
        _probe(path, option)
        return path
    base = _existing_ancestor(os.path.join(path, "x"))
    if not os.path.isdir(base):
        raise ParameterError(option, f"{base!r} is a file; a folder is needed there")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ParameterError(option, f"folder {base!r} is not writable")
    _probe(base, option)
    return path


def check_cache_dir(path, option: str = "--cache") -> str:
    """A cache folder: like :func:`check_output_dir` (its entries are never overwritten with
    different content, so no ``--force`` is involved)."""
    return check_output_dir(path, option)


@contextlib.contextmanager
def written(path, option: str):
    """Writing ``path`` after the work: an ``OSError`` that no up-front check can foresee (a disk
    that fills up) is exit 2 naming the option, not an internal error."""
    try:
        yield
    except OSError as exc:
        raise ParameterError(option, f"cannot write {str(path)!r}: "
                                     f"{exc.strerror or exc}") from None
