"""Plant each scoring change below in the source, one at a time, run the boundary tests, revert.

Issue 23 §6: a planted change of Yamb's column-bonus threshold (60 to 61) once passed the
whole suite. Every change here must make tests/test_scoring_boundaries.py fail:

    python tests/plant_scoring_changes.py .           # from the project folder; about 5 minutes

It rewrites yahtzee_sim/rules/catalog.py and base.py in place for each run and puts
them back (also on Ctrl-C): run it on a clean checkout, not while other tests run.
"""

import os
import subprocess
import sys
from pathlib import Path

CAT = "yahtzee_sim/rules/catalog.py"
BASE = "yahtzee_sim/rules/base.py"
MUTANTS = [
    (CAT, "YAMB_BONUS_AT, YAMB_BONUS = 60, 30", "YAMB_BONUS_AT, YAMB_BONUS = 61, 30"),
    (CAT, "YAMB_BONUS_AT, YAMB_BONUS = 60, 30", "YAMB_BONUS_AT, YAMB_BONUS = 59, 30"),
    (CAT, "YAMB_BONUS_AT, YAMB_BONUS = 60, 30", "YAMB_BONUS_AT, YAMB_BONUS = 60, 31"),
    (CAT, "bonus = np.where(upper >= YAMB_BONUS_AT, YAMB_BONUS, 0)", "bonus = np.where(upper > YAMB_BONUS_AT, YAMB_BONUS, 0)"),
    (CAT, "middle = (cards[:, :, 6] - cards[:, :, 7]) * cards[:, :, 0]", "middle = (cards[:, :, 6] - cards[:, :, 7]) * cards[:, :, 1]"),
    (CAT, "(66, 56, 46)", "(66, 56, 45)"),
    (CAT, "((63, 35), (71, 55), (78, 75))", "((63, 35), (72, 55), (78, 75))"),
    (CAT, "((63, 35), (71, 55), (78, 75))", "((63, 35), (71, 55), (78, 76))"),
    (CAT, "n_dice=6, upper_bonus_threshold=84, upper_bonus=100", "n_dice=6, upper_bonus_threshold=85, upper_bonus=100"),
    (CAT, "n_dice=6, upper_bonus_threshold=84, upper_bonus=100", "n_dice=6, upper_bonus_threshold=84, upper_bonus=99"),
    (CAT, "options=tuple(sorted(options)), upper_bonus=50,", "options=tuple(sorted(options)), upper_bonus=49,"),
    (CAT, "options=tuple(sorted(options)), upper_bonus_threshold=63, upper_bonus=35,", "options=tuple(sorted(options)), upper_bonus_threshold=62, upper_bonus=35,"),
    (CAT, "upper_bonus_threshold=three_of_each(faces), upper_bonus=35,", "upper_bonus_threshold=three_of_each(faces), upper_bonus=36,"),
    (CAT, "    return 3 * n_faces * (n_faces + 1) // 2", "    return 3 * n_faces * (n_faces + 1) // 2 + (n_faces == 7)"),
    (CAT, "five_bonus=0 if \"no-yahtzee-bonus\" in options else 100,", "five_bonus=0 if \"no-yahtzee-bonus\" in options else 99,"),
    (CAT, "five_bonus=100 if \"yacht-bonus-100\" in options else 0", "five_bonus=101 if \"yacht-bonus-100\" in options else 0"),
    (CAT, "(\"fours\", 52, 2)", "(\"fours\", 53, 2)"),
    (CAT, "(\"choice\", 100, 2)", "(\"choice\", 99, 2)"),
    (CAT, "(\"sixes\", 78, 2)", "(\"sixes\", 78, 3)"),
    (CAT, "((\"straight\", 4), (\"full_house\", 3))", "((\"straight\", 4), (\"full_house\", 2))"),
    (CAT, "BALUT_EACH_POINTS = ((\"balut\", 2),)", "BALUT_EACH_POINTS = ((\"balut\", 3),)"),
    (CAT, "BALUT_SCORE_BANDS = (350, 50, -2, 6)", "BALUT_SCORE_BANDS = (350, 50, -2, 5)"),
    (CAT, "BALUT_SCORE_BANDS = (350, 50, -2, 6)", "BALUT_SCORE_BANDS = (351, 50, -2, 6)"),
    (CAT, "s.served(s.straight(5, 20, runs=escalera_runs), 5)", "s.served(s.straight(5, 20, runs=escalera_runs), 4)"),
    (CAT, "s.served(s.five_of_a_kind(50), 10)", "s.served(s.five_of_a_kind(50), 5)"),
    (CAT, "else 100 if \"kniffel-bonus-100\" in options else 50", "else 100 if \"kniffel-bonus-100\" in options else 40"),
    (CAT, "    return 3 * n_faces * (n_faces + 1) // 2", "    return 3 * n_faces * (n_faces + 1) // 2 - (n_faces == 6)"),
    (BASE, "return np.where(upper_total >= self.upper_bonus_threshold, self.upper_bonus, 0)", "return np.where(upper_total > self.upper_bonus_threshold, self.upper_bonus, 0)"),
    (BASE, "return np.multiply(upper_scores >= need[:, None], np.int16(self.upper_bonus), dtype=np.int16)", "return np.multiply(upper_scores > need[:, None], np.int16(self.upper_bonus), dtype=np.int16)"),
    (BASE, "out = np.where(upper_total >= threshold, np.int16(bonus), out)", "out = np.where(upper_total > threshold, np.int16(bonus), out)"),
    (BASE, "+ np.asarray(five_bonus_count).astype(np.int32) * self.five_bonus", "+ np.minimum(np.asarray(five_bonus_count), 1).astype(np.int32) * self.five_bonus"),
]

def main() -> None:
    ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    only = sys.argv[2] if len(sys.argv) > 2 else "tests/test_scoring_boundaries.py"
    caught = 0
    for path, old, new in MUTANTS:
        f = ROOT / path
        text = f.read_text()
        assert text.count(old) == 1, (path, old)
        f.write_text(text.replace(old, new))
        try:
            r = subprocess.run([sys.executable, "-m", "pytest", only, "-q", "-x", "-p", "no:cacheprovider"],
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=600)
        finally:
            f.write_text(text)
        ok = r.returncode != 0
        caught += ok
        print(("CAUGHT " if ok else "MISSED ") + f"{path}: {old!r} -> {new!r}", flush=True)
    print(f"{caught} of {len(MUTANTS)} planted changes caught")


if __name__ == "__main__":
    main()
