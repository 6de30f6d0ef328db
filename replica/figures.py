r"""The figure style of every plot the package, the CLI, the demo and the notebooks draw.

* **Colours**: the eight colours of Okabe and Ito (2008), chosen to stay distinct for the common
  forms of colour blindness; :func:`series_style` pairs the ``i``-th colour with its own marker and
  line style, so that series also stay apart in greyscale print. Colour maps: ``cividis``
  (sequential, perceptually uniform and monotone in lightness, hence readable in grey and by
  colour-blind readers) and ``PuOr`` (diverging, for signed quantities centred on 0; its two ends
  have equal lightness, so a diverging map needs its zero line drawn -- the callers draw it).
* **Labels**: :func:`label` writes a parameter or reported quantity as mathtext (``kappa`` ->
  :math:`\kappa`, ``idg`` -> :math:`\varepsilon_{\rm IDG}`); :func:`log_axis` puts powers of ten
  :math:`10^k` on a logarithmic axis; :func:`text_colour` picks black or white text for a
  background colour by its luminance.
* **Files**: :func:`save_figure` writes PNG (raster, for screens), PDF and SVG (vector, for
  papers) from one stem; the vector files carry no creation date, so rerunning a figure does not
  change them.

Figures are :class:`matplotlib.figure.Figure` objects made by :func:`new_figure`, outside pyplot's
registry: the package never selects a backend or keeps a figure alive, and a returned figure
displays itself in Jupyter.
"""

from __future__ import annotations

import os

#: Okabe--Ito colours, in the order series take them (yellow last: weak on white).
OKABE_ITO = ("#0072B2",  # blue
             "#D55E00",  # vermillion
             "#009E73",  # bluish green
             "#CC79A7",  # reddish purple
             "#E69F00",  # orange
             "#56B4E9",  # sky blue
             "#000000",  # black
             "#F0E442")  # yellow
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 2)),
              (0, (3, 1, 1, 1)))
SEQUENTIAL = "cividis"
DIVERGING = "PuOr"
#: The file formats :func:`save_figure` writes.
FORMATS = ("png", "pdf", "svg")

#: Mathtext of the parameters and reported quantities of the built-in models (the names of
#: ``replica solve --json``); other names go through :func:`label`'s generic rule.
LABELS = {
    "alpha": r"$\alpha$", "tau": r"$\tau$", "kappa": r"$\kappa$", "rho": r"$\rho$",
    "sigma": r"$\sigma$", "lam": r"$\lambda$", "d": r"$d$", "alpha_test": r"$\alpha_{\rm test}$",
    "sigma_test": r"$\sigma_{\rm test}$", "p_test": r"$p_{\rm test}$",
    "p_train": r"$p_{\rm train}$", "gamma": r"$\gamma$", "p": r"$p$",
    "e_icl": r"$E_{\rm ICL}$", "e_scalar": r"$e_{\rm scalar}$",
    "e_misalign": r"$e_{\rm misalign}$", "e_idg": r"$e_{\rm IDG}$",
    "lambda_tilde": r"$\tilde\lambda$", "M": r"$M_\kappa$", "M_prime": r"$M'_\kappa$",
    "resolvent": r"$\mathcal{A}_{\rm resolvent}$", "inverse": r"$\mathcal{A}_{\rm inverse}$",
    "cka_inv": r"$\mathcal{A}_{\rm CKA}$",
    "tm": r"$\varepsilon_{\rm TM}$", "idg": r"$\varepsilon_{\rm IDG}$",
    "odg": r"$\varepsilon_{\rm ODG}$", "q": r"$q$", "m": r"$m$", "chi": r"$\chi$",
    "qbar": r"$\bar q$", "chibar": r"$\bar\chi$", "qhat": r"$\hat q$", "mhat": r"$\hat m$",
    "chihat": r"$\hat\chi$", "qbarhat": r"$\hat{\bar q}$", "chibarhat": r"$\hat{\bar\chi}$",
    "z": r"$z$", "mbar": r"$\bar m$", "m0": r"$m_0$", "q0": r"$q_0$", "q_perp": r"$q_\perp$",
    "V": r"$V$", "Vhat": r"$\hat V$",
}
# ``train``/``test`` are left to the generic rule: covariances in one model, errors in another.


def label(name: str) -> str:
    """The mathtext label of a parameter or quantity ``name``: :data:`LABELS` where listed, else
    ``a_b`` as :math:`\\mathrm{a}_{\\mathrm{b}}` (a one-letter name in italics)."""
    if name in LABELS:
        return LABELS[name]
    head, _, tail = str(name).partition("_")

    def part(s):
        s = s.replace("_", r"\_")
        return s if len(s) == 1 else r"\mathrm{" + s + "}"

    return "$" + part(head) + (r"_{" + part(tail) + "}" if tail else "") + "$"


def value_text(name: str, value) -> str:
    """``name = value`` in mathtext (``kappa``, ``1/2`` -> :math:`\\kappa = 1/2`; ``1e-4`` ->
    :math:`10^{-4}`, ``inf`` -> :math:`\\infty`, a SPEC such as ``spike:1`` upright)."""
    return label(name)[:-1] + " = " + _value_math(value) + "$"


def _value_math(value) -> str:
    import re

    text = str(value).strip()
    m = re.fullmatch(r"([-+]?[0-9.]+)[eE]([-+]?[0-9]+)", text)
    if m:
        mant, exp = m.group(1), int(m.group(2))
        power = "10^{" + str(exp) + "}"
        return power if float(mant) == 1 else mant + r"\times" + power
    if re.fullmatch(r"[-+]?[0-9./]+", text):
        return text
    if text in ("inf", "oo"):
        return r"\infty"
    return r"\mathrm{" + text.replace("_", r"\_").replace(" ", r"\ ") + "}"


def series_style(i: int) -> dict:
    """Colour, marker and line style of the ``i``-th series (``plot`` keywords)."""
    return {"color": OKABE_ITO[i % len(OKABE_ITO)], "marker": MARKERS[i % len(MARKERS)],
            "linestyle": LINESTYLES[i % len(LINESTYLES)]}


def colour(i: int) -> str:
    """The ``i``-th Okabe--Ito colour."""
    return OKABE_ITO[i % len(OKABE_ITO)]


def text_colour(rgba) -> str:
    """``"black"`` or ``"white"``, whichever contrasts more with the background ``rgba`` (relative
    luminance of sRGB, threshold 0.179: the point of equal contrast ratio with both)."""
    def linear(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(float(c)) for c in tuple(rgba)[:3])
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 else "white"


def text_colour_at(mappable, value) -> str:
    """The text colour (:func:`text_colour`) on a colour map ``mappable`` at data ``value``."""
    return text_colour(mappable.to_rgba(value))


def log_axis(ax, which: str = "x") -> None:
    r"""Logarithmic ``which`` axis (``"x"``, ``"y"`` or ``"xy"``; call it after plotting). Over
    two decades or more the ticks are powers of ten written :math:`10^k`
    (``LogFormatterMathtext``) instead of ``1e2``, minor ticks unlabelled; over a shorter range,
    where at most one power of ten is in view, ticks at :math:`1, 2, 5 \times 10^k` are written
    as plain numbers (:math:`0.5, 1, 2`)."""
    from matplotlib.ticker import FuncFormatter, LogFormatterMathtext, LogLocator, NullFormatter

    for w in which:
        (ax.set_xscale if w == "x" else ax.set_yscale)("log")
        axis = ax.xaxis if w == "x" else ax.yaxis
        lo, hi = sorted(ax.get_xlim() if w == "x" else ax.get_ylim())
        if lo > 0 and hi / lo >= 100:
            axis.set_major_locator(LogLocator(base=10))
            axis.set_major_formatter(LogFormatterMathtext())
        else:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:g}$"))
        axis.set_minor_formatter(NullFormatter())


#: rcParams of :func:`style`: TrueType fonts embedded in PDFs (text stays text), SVG glyphs as
#: paths (the file renders without the fonts), SVG element ids from a fixed salt (reproducible).
RC = {"pdf.fonttype": 42, "svg.fonttype": "path", "svg.hashsalt": "replica"}


def rc_params() -> dict:
    """The package's rcParams: :data:`RC` and the Okabe--Ito cycle of colours and line styles
    (for ``matplotlib.rcParams.update`` in a script that draws with pyplot)."""
    from matplotlib import cycler

    n = len(OKABE_ITO)
    return {**RC, "axes.prop_cycle": cycler(color=list(OKABE_ITO))
            + cycler(linestyle=list(LINESTYLES[:n]))}


def style():
    """A context manager with :func:`rc_params`; a figure drawn inside it takes them."""
    import matplotlib as mpl

    return mpl.rc_context(rc_params())


def new_figure(nrows: int = 1, ncols: int = 1, **kwargs):
    """``(figure, axes)`` like ``pyplot.subplots``, drawn in :func:`style`, but a bare
    :class:`~matplotlib.figure.Figure` that pyplot does not track (nothing to close)."""
    from matplotlib.figure import Figure

    figsize = kwargs.pop("figsize", None)
    with style():
        fig = Figure(figsize=figsize)
        axes = fig.subplots(nrows, ncols, **kwargs)
    return fig, axes


def save_figure(fig, path_stem, formats=FORMATS, dpi: int = 150) -> list[str]:
    """Write ``fig`` as ``path_stem.png``, ``.pdf`` and ``.svg`` (or ``formats``); a suffix among
    them on ``path_stem`` is dropped. Returns the paths written, in the order of ``formats``."""
    stem = str(path_stem)
    root, ext = os.path.splitext(stem)
    if ext.lstrip(".").lower() in FORMATS:
        stem = root
    folder = os.path.dirname(stem)
    if folder:
        os.makedirs(folder, exist_ok=True)
    metadata = {"pdf": {"CreationDate": None, "Producer": None}, "svg": {"Date": None},
                "png": {}}
    paths = []
    with style():
        for fmt in formats:
            path = f"{stem}.{fmt}"
            fig.savefig(path, format=fmt, dpi=dpi, metadata=metadata.get(fmt, {}))
            paths.append(path)
    return paths
