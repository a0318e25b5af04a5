"""A writer's claims file, checked and reported: ``ys.check`` and ``yahtzee-sim check --out``.

The claims are answered by :mod:`yahtzee_sim.questions` (the same code that checks the
source documents' claims for ``yahtzee-sim verify``); this module writes the report.
"""

from __future__ import annotations

from pathlib import Path




def check(path, *, games: int = 20_000, throws: int = 100_000, seed: int = 2026, out=None, progress=None):
    """Check the claims of the file at ``path``; with ``out``, also write the report there.

    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "mine.toml"
    >>> _ = f.write_text('[[claim]]\\nid = "y"\\nask = "chance"\\nevent = "five_of_a_kind"\\nscope = "roll"\\n'
    ...                  'claimed = "6/7776"\\n')
    >>> check(f, throws=1000).frame().loc["y", "verdict"]
    'confirmed'
    """
    from ..questions.claims import check_claims, load_claims_file

    claims = load_claims_file(path)
    if out is not None:
        from .output import check_output_root, check_replaceable

        check_replaceable(check_output_root(out))   # before any work: a bad folder fails at once
    result = check_claims(claims, games=games, throws=throws, seed=seed, progress=progress)
    if out is not None:
        from .document import write_report

        command = f"yahtzee-sim check {path} --games {games} --throws {throws} --seed {seed} --out {out}"
        write_report(claims_report(result, command), Path(out))
    return result


def claims_report(result, command: str):
    """The report of a checked claims file (README with the verdict table and how each number
    was computed, CSV): ``yahtzee-sim check --out`` and :func:`check` with ``out``."""
    from .document import Report

    frame = result.frame()
    rep = Report(name="claims-check", title=result.file.title,
                 question="Is each number of these claims right? Each is computed exactly where the exact "
                          "engine can, beside a simulation with its 95% interval, and given a verdict.",
                 command=command, seed=result.seed)
    display = frame.reset_index()[["id", "claim", "exact_text", "simulated_text", "verdict"]].rename(
        columns={"id": "claim id", "claim": "claimed", "exact_text": "exact",
                 "simulated_text": "simulated (95% CI)"})
    counts = frame["verdict"].value_counts()
    rep.add_text("Verdicts", ", ".join(f"{v}: {int(n)}" for v, n in counts.items()) + ".\n\n"
                 "Verdicts: **confirmed** (the true value rounds to the claim at its stated precision), "
                 "**confirmed with rounding** (off by at most one unit of that precision), **imprecise** "
                 "(within three units or 10%), **wrong** (anything else). The exact value decides where "
                 "there is one; otherwise the simulated interval.")
    rep.add_table("claims", frame, display=display)
    lines = []
    for cid, row in frame.iterrows():
        quote = f" “{row['quote']}”" if row["quote"] else ""
        how = row["method"][:1].upper() + row["method"][1:]
        lines.append(f"* **{cid}**{quote} Question: {row['question']}. {how}."
                     + (f" Note: {row['note']}." if row["note"] else ""))
    rep.add_text("How it was computed", "\n".join(lines))
    return rep
