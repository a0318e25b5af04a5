"""The documentation runs: docs/tutorial.ipynb executes top to bottom (its own asserts
check the answers), and the README's strategy example works as written.

The notebook runs in a Jupyter kernel when nbclient, nbformat and ipykernel are
installed (the ``test`` extra); otherwise its code cells run in order in one
namespace, which checks the same code without a kernel.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "tutorial.ipynb"
README = ROOT / "README.md"


def _code_cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "code"]


def _has_kernel() -> bool:
    try:
        import ipykernel  # noqa: F401
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
    except ImportError:
        return False
    return True


def test_notebook_has_the_three_tasks():
    text = NOTEBOOK.read_text(encoding="utf-8")
    for heading in ["## 1. The chance of a Yahtzee in a game", "## 2. Your own strategy against `heuristic`",
                    "## 3. Two Yacht local rules against plain Yacht"]:
        assert heading in text
    nb = json.loads(text)
    assert all(not cell.get("outputs") for cell in nb["cells"] if cell["cell_type"] == "code"), \
        "commit the notebook without outputs (the test produces them)"


@pytest.mark.slow
def test_tutorial_notebook_executes(monkeypatch, tmp_path):
    if _has_kernel():
        import nbclient
        import nbformat

        nb = nbformat.read(NOTEBOOK, as_version=4)
        # The kernel is this Python, with this checkout importable.
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                         resources={"metadata": {"path": str(tmp_path)}})
        client.execute()
        images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
                  if o.get("output_type") == "display_data" and "image/png" in o.get("data", {})]
        assert images, "the Yacht plot was not drawn"
    else:  # no Jupyter here: the same code, cell after cell, in one namespace
        import matplotlib

        monkeypatch.setenv("MPLBACKEND", "Agg")
        matplotlib.use("Agg")
        monkeypatch.chdir(tmp_path)
        namespace: dict = {"__name__": "__tutorial__"}
        for i, source in enumerate(_code_cells(NOTEBOOK)):
            exec(compile(source, f"{NOTEBOOK.name}[cell {i}]", "exec"), namespace)
        import matplotlib.pyplot as plt

        assert plt.get_fignums(), "the Yacht plot was not drawn"
        plt.close("all")


def test_readme_strategy_example_runs(monkeypatch):
    """The README's "Your own strategy" block, run as written (fewer games)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("### Your own strategy", 1)[1]
    source = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    source = source.replace("100_000", "2_000")
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(source, "README.md", "exec"), namespace)
    res = namespace["res"]
    assert res.n_games == 2_000 and res.strategy == "chase-sixes"
    for field in ["state.turn", "state.filled", "state.upper_total", "box_index", "options.legal", "options.gain"]:
        assert field in source, field


def test_readme_simulate_figures_are_what_the_tool_prints():
    """The README's example figures (keep-largest, 100,000 games, seed 1) come from a run."""
    from yahtzee_sim import simulate

    text = README.read_text(encoding="utf-8")
    s = simulate("yahtzee", "keep-largest", 100_000, seed=1).summary()
    assert f"a game ({s['five_rolled_rate']:.3f} here)" in text
    assert f"not a chance ({s['five_count_mean']:.3f} here;" in text


# -- docs/questions.md: the twenty worked examples, run and compared ---------------------------

QUESTIONS = ROOT / "docs" / "questions.md"


def _question_examples() -> list[tuple[str, str]]:
    """(command, printed output) of every example of docs/questions.md."""
    text = QUESTIONS.read_text(encoding="utf-8")
    return re.findall(r"```bash\nyahtzee-sim (ask .*?)\n```\n\n```text\n(.*?)\n```", text, re.S)


def _is_game(command: str) -> bool:
    return "--scope game" in command or "--scope table" in command


def test_questions_doc_has_twenty_examples():
    examples = _question_examples()
    assert len(examples) >= 20
    assert {w for c, _ in examples for w in ("roll", "position", "turn", "game", "table")
            if f"--scope {w}" in c or (w == "position" and ("--keep" in c or "--dice" in c))} == \
        {"roll", "position", "turn", "game", "table"}


def _run_example(command: str, capsys) -> str:
    import shlex

    from yahtzee_sim.cli import main

    assert main(shlex.split(command)) == 0
    return capsys.readouterr().out.rstrip()


@pytest.mark.parametrize("command, printed", [e for e in _question_examples() if not _is_game(e[0])],
                         ids=lambda x: x[:60] if x.startswith("ask") else "")
def test_questions_doc_dice_examples_print_what_the_doc_shows(command, printed, capsys):
    assert _run_example(command, capsys) == printed


@pytest.mark.slow
@pytest.mark.parametrize("command, printed", [e for e in _question_examples() if _is_game(e[0])],
                         ids=lambda x: x[:60] if x.startswith("ask") else "")
def test_questions_doc_game_examples_print_what_the_doc_shows(command, printed, capsys):
    assert _run_example(command, capsys) == printed


@pytest.mark.slow
def test_questions_doc_python_block_runs():
    """The "From Python" block of docs/questions.md, as written."""
    text = QUESTIONS.read_text(encoding="utf-8")
    source = re.search(r"From Python:\n\n```python\n(.*?)```", text, re.S).group(1)
    namespace: dict = {"__name__": "__questions__"}
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)   # the block names experiments/claims/yahtzee.toml from the project's folder
        exec(compile(source, "docs/questions.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    from fractions import Fraction

    assert namespace["a"].exact == Fraction(5, 9) and namespace["a"].verdict == "confirmed"
    assert len(namespace["result"].frame()) == len(namespace["result"].answers) >= 10
