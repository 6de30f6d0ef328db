r"""Theory-vs-simulation reports (``replica check``): a table and a plot with the finite-size trend.

For a model, a set of parameter points (at most one parameter varies: the x-axis) and several
dimensions ``d``, the report holds for every point, ``d`` and error (lowrank: also order
parameter) the simulated mean over seeds, its standard error, the theory value, the z-score and
the relative deviation :math:`(\bar e_d - e_\infty)/|e_\infty|`. Finite-size corrections are
expected to be :math:`O(1/d)`, so the trend panel
plots the relative deviation against :math:`1/d`, where a correct theory is the intercept 0.

The figure (:func:`check_figure`, written as PNG, PDF and SVG): theory as lines (a dense grid of the varied parameter, solved
in-process), simulations as markers with standard-error bars, one marker shape per ``d``; a
second panel with the order parameters (where the model declares them); a last panel with the
trend in ``1/d``.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path

from ..errors import ParameterError, ReplicaError
from ..params import INF, numeric_columns, parse_exact
from .experiment import make_experiment, theory


@dataclasses.dataclass
class CheckRow:
    x: str | None  # value of the varied parameter (exact string), None if nothing varies
    d: int
    group: str  # "errors" or "order_parameters"
    key: str
    mean: float
    sem: float | None
    seeds: int
    theory: float | None
    z: float | None
    relative_deviation: float | None


@dataclasses.dataclass
class CheckReport:
    model: str
    varied: str | None
    params: dict  # fixed parameters (exact strings)
    ds: list
    seeds: int
    rows: list
    line: dict  # {"x": [...floats], group: {key: [...floats or None]}}
    computed: int
    cached: int
    notes: list

    def to_pandas(self):
        """The rows of ``check.csv`` as a ``pandas.DataFrame`` (:func:`check_table`)."""
        return check_table(self).to_pandas()

    def to_xarray(self):
        """An ``xarray.Dataset`` over the varied parameter, ``d`` and the quantity ``key``:
        ``mean``, ``sem``, ``theory``, ``z``, ``relative_deviation``."""
        return check_table(self).to_xarray()


def varied_parameter(points: list[dict]) -> str | None:
    """The one parameter whose value differs between ``points`` (``None`` if none); a
    :class:`ParameterError` if several do."""
    names = [k for k in points[0] if len({p[k] for p in points}) > 1]
    if len(names) > 1:
        raise ParameterError("--" + names[1].replace("_", "-"),
                             "replica check varies at most one parameter (the x-axis); "
                             f"got lists for {', '.join(names)}")
    return names[0] if names else None


def _numeric(text):
    try:
        v = parse_exact(text, "x", allow_inf=True)
    except ParameterError:
        return None
    return None if v == INF else v


def _theory_at(source, params: dict, d: int, dps: int, keys) -> dict | None:
    """``{group: {key: float}}``: the theory of one point (a linear-attention model's errors and
    order parameters; a model file's values named ``keys``, from an unverified solve)."""
    from ..capabilities import LinearAttentionICL

    if isinstance(source.simulation, LinearAttentionICL):
        return theory(make_experiment(source, d, check_sizes=False, **params), dps)
    from ..numerics.driver import solve_params
    from .declared import point, theory_value

    res = solve_params(source.problem, point(source, d, params), dps=dps, verify=False)
    return {"errors": {k: float(theory_value(res, k, source)) for k in keys}}


def theory_line(model, fixed: dict, varied: str, values: list[str], d: int,
                num: int = 41, dps: int = 20, keys=()) -> dict:
    """Theory on a dense grid of ``varied`` between the smallest and largest of ``values``
    (plus the values themselves); points where the theory is undefined are skipped. ``keys``:
    the measured names of a model file's simulation."""
    from .source import as_source

    source = as_source(model)
    from ..params import exact_str
    from .sweep import linspace_exact

    nums = [_numeric(v) for v in values]
    if any(v is None for v in nums) or num < 2:
        grid = [v for v in nums if v is not None]
    else:
        lo, hi = min(nums), max(nums)
        grid = sorted({Fraction(s) for s in linspace_exact(lo, hi, num)} | set(nums))
    xs, vals = [], {}
    for x in grid:
        params = dict(fixed)
        params[varied] = exact_str(x)
        try:
            th = _theory_at(source, params, d, dps, keys)
        except ReplicaError:
            continue
        if th is None:
            continue
        xs.append(float(x))
        for group, group_vals in th.items():
            if not isinstance(group_vals, dict):  # the solve's status, not a group of values
                continue
            for k, v in group_vals.items():
                vals.setdefault(group, {}).setdefault(k, []).append(v)
    return {"x": xs, **vals}


def run_check(model, points: list[dict], ds: list[int], seeds: int, seed: int = 0,
              dps: int = 30, options: dict | None = None, line_points: int = 41,
              **run_kwargs) -> CheckReport:
    """Simulate every point at every ``d`` (``seeds`` seeds; through
    :mod:`replica.simulate.sweep`, so cached and parallel) and collect the table and the theory line."""
    from .source import as_source
    from .sweep import make_jobs, run_jobs, summarise

    source = as_source(model)
    if seeds < 2:
        raise ParameterError("--seeds", "a check needs at least 2 seeds (standard errors)")
    if not ds:
        raise ParameterError("--ds", "give at least one dimension")
    varied = varied_parameter(points)
    jobs = make_jobs(source, points, ds, seeds, seed, dps, with_theory=True, options=options)
    run = run_jobs(jobs, **run_kwargs)
    sims, _ = summarise(source, jobs, run)
    rows = []
    for r in sims:
        x = r.params[varied] if varied else None
        groups = [("errors", r.errors)]
        if r.order_parameters:
            groups.append(("order_parameters", r.order_parameters))
        for gname, group in groups:
            for key, e in group.items():
                rows.append(CheckRow(x, r.d, gname, key, e.mean, e.sem, e.seeds, e.theory, e.z,
                                     e.relative_deviation))
    # parameters equal at every point (for display); defaults such as alpha_test = alpha vary
    # with their parent, so the theory line starts from the user's own values instead
    fixed = {k: v for k, v in sims[0].params.items()
             if all(r.params[k] == v for r in sims)} if sims else {}
    line = {}
    notes = list(sims[0].notes) if sims else []
    if varied:
        given = {k: v for k, v in points[0].items() if k != varied}
        line = theory_line(source, given, varied, [p[varied] for p in points], max(ds),
                           line_points, min(dps, 20), keys=list(sims[0].errors) if sims else ())
        if _theory_depends_on_d(source):
            notes.append(f"theory line at the d = {max(ds)} spectrum; table rows use the "
                         "spectrum at their own d")
    if rows and all(r.theory is None for r in rows):
        notes.append("no theory available")
    return CheckReport(source.name, varied, fixed, list(ds), seeds, rows, line, run.computed,
                       run.cached, sorted(set(notes)))


def _theory_depends_on_d(source) -> bool:
    """Whether the model's theory is solved at the finite-d spectrum of the simulation."""
    from ..capabilities import LinearAttentionICL

    sim = source.simulation
    if isinstance(sim, LinearAttentionICL):
        return sim.theory_at_d
    return "d" in source.schema


def _keys(report: CheckReport, group: str) -> list:
    """The quantities of ``group`` in the report, in the order of its rows."""
    return list(dict.fromkeys(r.key for r in report.rows if r.group == group))


def _f(x, spec):
    return "" if x is None else format(x, spec)


def check_table(report: CheckReport):
    """The rows of ``check.csv`` as a :class:`replica.tables.Table`: the varied parameter as
    floats and exactly (``NAME``, ``NAME_exact``; a SPEC as text), ``d``, ``group``, ``key``,
    ``mean``, ``sem``, ``seeds``, ``theory``, ``z``, ``relative_deviation``."""
    from ..tables import Table

    def num(v):
        return "" if v is None else repr(v)

    name = report.varied or "point"
    head, xcols = numeric_columns(name, ["" if r.x is None else r.x for r in report.rows])
    rows = [[col[i] for col in xcols] + [r.d, r.group, r.key, repr(r.mean), num(r.sem),
                                         r.seeds, num(r.theory), num(r.z),
                                         num(r.relative_deviation)]
            for i, r in enumerate(report.rows)]
    dims = ([name] if report.varied else []) + ["d", "key"]
    return Table(head + ["d", "group", "key", "mean", "sem", "seeds", "theory", "z",
                         "relative_deviation"], rows, dims,
                 {"model": report.model, **{k: str(v) for k, v in report.params.items()}})


def write_table(report: CheckReport, outdir: Path) -> list[Path]:
    """``check.csv`` (full precision; the varied parameter as a float column and an exact
    ``NAME_exact`` column) and ``check.md`` (readable)."""
    outdir.mkdir(parents=True, exist_ok=True)
    csv_path = outdir / "check.csv"
    check_table(report).write_csv(csv_path)
    md_path = outdir / "check.md"
    fixed = ", ".join(f"{k}={v}" for k, v in report.params.items())
    lines = [f"# replica check {report.model}", "",
             f"Fixed parameters: {fixed}. Dimensions: {', '.join(map(str, report.ds))}; "
             f"{report.seeds} seeds each. Mean ± standard error over seeds; z = (mean - theory)"
             f" / sem; rel. dev. = (mean - theory) / |theory|.", "",
             f"| {report.varied or 'point'} | d | quantity | mean ± sem | theory | z | rel. dev. |",
             "|---|---|---|---|---|---|---|"]
    for r in report.rows:
        lines.append(f"| {r.x if r.x is not None else '-'} | {r.d} | {r.key} | "
                     f"{r.mean:.5g} ± {_f(r.sem, '.2g')} | {_f(r.theory, '.5g')} | "
                     f"{_f(r.z, '.2f')} | {_f(r.relative_deviation, '+.3f')} |")
    lines.append("")
    lines += [f"- note: {n}" for n in report.notes]
    lines.append(f"- jobs: {report.computed} computed, {report.cached} from the cache")
    md_path.write_text("\n".join(lines) + "\n")
    return [csv_path, md_path]


def check_figure(report: CheckReport):
    """The figure of a check: theory lines, simulation means with standard-error bars (one marker
    per ``d``), and the relative deviation against :math:`1/d`. One colour per quantity; the
    legend lists every quantity's theory and every ``d``'s marker. Returns the Figure."""
    from matplotlib.lines import Line2D

    from .. import figures

    groups = ["errors"] + (["order_parameters"] if _keys(report, "order_parameters") else [])
    ds = sorted(report.ds)
    with figures.style():
        fig, axes = figures.new_figure(1, len(groups) + 1,
                                       figsize=(5.2 * (len(groups) + 1), 4.4))
        for ax, group in zip(axes, groups):
            keys = _keys(report, group)
            handles = []
            for ci, key in enumerate(keys):
                colour = figures.colour(ci)
                rows = [r for r in report.rows if r.group == group and r.key == key]
                theory_kw = {}
                if report.varied:
                    xs = list(dict.fromkeys(r.x for r in rows))
                    numeric = all(_numeric(x) is not None for x in xs)
                    # numeric x: true positions; SPEC strings or inf: categories 0, 1, ...
                    pos = {x: float(_numeric(x)) if numeric else float(i)
                           for i, x in enumerate(xs)}
                    if numeric and report.line.get(group, {}).get(key):
                        ax.plot(report.line["x"], report.line[group][key], color=colour, ls="-")
                        theory_kw = {"ls": "-"}
                    elif not numeric:
                        top = [r for r in rows if r.d == max(ds) and r.theory is not None]
                        ax.plot([pos[r.x] for r in top], [r.theory for r in top], "_", ms=18,
                                mew=2, color=colour)
                        theory_kw = {"ls": "none", "marker": "_", "ms": 12, "mew": 2}
                    span = (max(pos.values()) - min(pos.values())) if len(pos) > 1 else 1.0
                    for di, d in enumerate(ds):
                        sel = [r for r in rows if r.d == d]
                        off = (di - (len(ds) - 1) / 2) * (0.012 if numeric else 0.06) * span
                        ax.errorbar([pos[r.x] + off for r in sel], [r.mean for r in sel],
                                    yerr=[r.sem or 0 for r in sel],
                                    fmt=figures.MARKERS[di % len(figures.MARKERS)],
                                    color=colour, ms=4, capsize=2, linestyle="none")
                    if not numeric:
                        ax.set_xticks(list(pos.values()), [str(x) for x in pos], rotation=20,
                                      fontsize=7)
                    ax.set_xlabel(figures.label(report.varied))
                else:
                    th = next((r.theory for r in rows if r.theory is not None), None)
                    if th is not None:
                        ax.axhline(th, color=colour, lw=1, ls="-")
                        theory_kw = {"ls": "-"}
                    sel = sorted(rows, key=lambda r: r.d)
                    ax.errorbar([1 / r.d for r in sel], [r.mean for r in sel],
                                yerr=[r.sem or 0 for r in sel], fmt="o", color=colour, ms=4,
                                capsize=2, linestyle="none")
                    ax.set_xlabel(r"$1/d$")
                    ax.set_xlim(left=0)
                what = "theory" if theory_kw else "no theory"
                handles.append(Line2D([], [], color=colour, **(theory_kw or {"ls": "none"}),
                                      label=f"{figures.label(key)} {what}"))
            if report.varied:
                handles += [Line2D([], [], color="0.3", ls="none",
                                   marker=figures.MARKERS[di % len(figures.MARKERS)], ms=4,
                                   label=f"simulation, $d = {d}$ (mean ± s.e.)")
                            for di, d in enumerate(ds)]
            else:
                handles.append(Line2D([], [], color="0.3", ls="none", marker="o", ms=4,
                                      label="simulation at each $d$ (mean ± s.e.)"))
            ax.set_title("errors" if group == "errors" else "order parameters")
            ax.legend(handles=handles, fontsize=7, ncol=2)
        ax = axes[-1]
        allkeys = [(g, k) for g in groups for k in _keys(report, g)]
        for ci, (g, key) in enumerate(allkeys):
            colour = figures.colour(ci)
            xs = sorted({r.x for r in report.rows if r.group == g and r.key == key},
                        key=lambda v: (v is None, str(v)))
            for xi, x in enumerate(xs):
                sel = sorted((r for r in report.rows if r.group == g and r.key == key
                              and r.x == x and r.relative_deviation is not None),
                             key=lambda r: r.d)
                if not sel:
                    continue
                scale = [abs(r.theory) for r in sel]
                ax.errorbar([1 / r.d for r in sel], [r.relative_deviation for r in sel],
                            yerr=[(r.sem or 0) / s for r, s in zip(sel, scale)], ls="-",
                            marker=figures.MARKERS[ci % len(figures.MARKERS)], ms=3,
                            color=colour, alpha=0.8, capsize=2, lw=0.8,
                            label=figures.label(key) if xi == 0 else None)
        ax.axhline(0, color="k", lw=0.8, ls="-", label="theory ($d\\to\\infty$)")
        ax.set_xlim(left=0)
        ax.set_xlabel(r"$1/d$")
        ax.set_ylabel(r"(simulation $-$ theory) / |theory|")
        ax.set_title("finite-size trend" + (" (one line per point)" if report.varied else ""))
        ax.legend(fontsize=7, ncol=2)
        fig.suptitle(f"replica check {report.model}: " +
                     ", ".join(figures.value_text(k, v) for k, v in report.params.items()),
                     fontsize=8)
        fig.tight_layout()
    return fig


def write_plot(report: CheckReport, outdir: Path) -> list[Path]:
    """``check.png``, ``check.pdf`` and ``check.svg``: the figure of :func:`check_figure`."""
    from ..figures import save_figure

    return [Path(p) for p in save_figure(check_figure(report), Path(outdir) / "check")]


def write_report(report: CheckReport, outdir) -> list[Path]:
    """Write ``check.csv``, ``check.md`` and the figure ``check.png``, ``.pdf``, ``.svg`` into
    ``outdir``."""
    outdir = Path(outdir)
    files = write_table(report, outdir)
    files.extend(write_plot(report, outdir))
    return files
