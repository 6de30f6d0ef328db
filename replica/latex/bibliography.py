"""The papers the appendices cite, as BibTeX entries.

Prose cites a paper with ``[[cite:KEY]]`` (rendered ``\\cite{KEY}``). Every appendix uses one
bibliography file, :data:`BIB_NAME` ``.bib``, holding all of :data:`PAPERS` (BibTeX prints only the
cited ones): its content does not depend on the appendix, so several appendices in one paper share
it, where two files with the same entry would make BibTeX stop at a repeated key. The data were checked against the arXiv
listings (titles, authors as listed there, identifiers, primary classes) and, for Lu et al., the
journal version.

Each arXiv identifier is written once, in ``note`` or ``howpublished``: BibTeX's ``unsrt`` ignores
an ``eprint`` field and revtex's ``apsrev4-2`` prints it as well as the note, so a second copy
in ``eprint`` would show twice in a revtex paper.
"""

from __future__ import annotations

#: The bibliography file's name (without ``.bib``).
BIB_NAME = "replica-papers"

#: key -> BibTeX type and fields (field order as written).
PAPERS = {
    "lu2024asymptotic": ("article", (
        ("author", "Lu, Yue M. and Letey, Mary I. and Zavatone-Veth, Jacob A. and Maiti, "
                   "Anindita and Pehlevan, Cengiz"),
        ("title", "Asymptotic theory of in-context learning by linear attention"),
        ("journal", "Proceedings of the National Academy of Sciences"),
        ("volume", "122"),
        ("number", "28"),
        ("pages", "e2502599122"),
        ("year", "2025"),
        ("doi", "10.1073/pnas.2502599122"),
        ("note", "arXiv:2405.11751"),
    )),
    "letey2025alignment": ("misc", (
        ("author", "Letey, Mary I. and Zavatone-Veth, Jacob A. and Lu, Yue M. and "
                   "Pehlevan, Cengiz"),
        ("title", "Pretrain-Test Task Alignment Governs Generalization in In-Context Learning"),
        ("howpublished", "arXiv:2509.26551 [stat.ML]"),
        ("year", "2025"),
    )),
    "takanami2025lowrank": ("misc", (
        ("author", "Takanami, Kaito and Takahashi, Takashi and Kabashima, Yoshiyuki"),
        ("title", "Learning Linear Regression with Low-Rank Tasks in-Context"),
        ("howpublished", "arXiv:2510.04548 [cond-mat.dis-nn]"),
        ("year", "2025"),
    )),
}


def _protect_title(title: str) -> str:
    # BibTeX styles lower-case titles; braces keep the capitals the authors wrote.
    return "{%s}" % title


def bibtex(keys=None) -> str:
    """The ``.bib`` text of ``keys`` (default: every paper; unknown keys raise
    :class:`KeyError`)."""
    keys = list(PAPERS) if keys is None else list(dict.fromkeys(keys))
    unknown = [k for k in keys if k not in PAPERS]
    if unknown:
        raise KeyError(f"no bibliographic entry for {', '.join(unknown)} "
                       f"(known: {', '.join(PAPERS)})")
    out = []
    for key in PAPERS:
        if key not in keys:
            continue
        kind, fields = PAPERS[key]
        lines = [f"@{kind}{{{key},"]
        for name, value in fields:
            value = _protect_title(value) if name == "title" else value
            lines.append(f"  {name} = {{{value}}},")
        lines.append("}")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"
