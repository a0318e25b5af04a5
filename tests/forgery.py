"""What the fault tests forge, written once (tests/test_faults_*.py, test_solver_faults.py):
a checkpoint edited with its checksum (and signature) recomputed, a solver cache rewritten
under a recomputed checksum, a solved table in a cache folder of its own, and the pid of a
process that has ended (a killed writer's temporary file).

Imported by the tests as ``from forgery import ...`` (tests/ is on the path, as for
``plain_game``)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from yahtzee_sim.exact import cache as cache_mod
from yahtzee_sim.exact import solver as solver_mod
from yahtzee_sim.exact.solver import cache_path, solve
from yahtzee_sim.signing import sign, signing_key

SIGNATURES = ("user", "keep", "none", "other key", "sha256")


def forge_checkpoint(path: Path, edit, *, signature: str = "user") -> None:
    """Edit a checkpoint (``edit(data)`` on its JSON) and recompute its checksum, as anyone
    can. ``signature``: ``"user"`` signs it with the user's key, as only the user could (so
    that the checks behind the signature are tested); ``"keep"`` keeps the old signature,
    ``"none"`` leaves it out, ``"other key"`` signs with a key that is not the user's and
    ``"sha256"`` puts a plain SHA-256 in its place (forgeries the signature must catch)."""
    if signature not in SIGNATURES:
        raise ValueError(f"signature must be one of {SIGNATURES}, got {signature!r}")
    data = json.loads(path.read_text())
    data.pop("checksum")
    tag = data.pop("signature", None)
    edit(data)
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    if signature == "user":
        data["signature"] = sign(signing_key(cache_mod.cache_dir()), canonical)
    elif signature == "keep":
        data["signature"] = tag
    elif signature == "other key":
        data["signature"] = sign(os.urandom(32), canonical)
    elif signature == "sha256":
        data["signature"] = hashlib.sha256(canonical).hexdigest()
    data["checksum"] = hashlib.sha256(canonical).hexdigest()
    path.write_text(json.dumps(data))


def solved_in(folder: Path, rules: str = "yacht", options=("fill-in-order",)) -> tuple:
    """Solve ``rules`` into the cache folder ``folder`` (the memo cleared first): the
    solution, its cache file and the arrays the file holds."""
    solver_mod._MEMO.clear()
    sol = solve(rules, options=list(options), cache_dir=folder)
    path = cache_path(sol.rules, "float32", folder)
    stored = cache_mod.load(path, solver_mod._meta(sol.rules, "float32"))
    assert stored is not None
    return sol, path, {k: np.array(v) for k, v in stored.items()}


def forge_cache(sol, path: Path, arrays: dict, *, key: bytes | None = None, keep_tag: bool = True) -> None:
    """Rewrite the cache file as a forger would: ``arrays`` under the right metadata with the
    checksum recomputed; the signature made with ``key`` if given (the user's key: a forgery
    only the checks of the values can catch), else the old one kept (``keep_tag``) or left out."""
    meta_json = json.dumps(solver_mod._meta(sol.rules, "float32"), sort_keys=True)
    with np.load(path) as z:
        old_tag = str(z["hmac"][()])
    payload = {f"a_{k}": v for k, v in arrays.items()}
    payload["meta"] = np.array(meta_json)
    digest = cache_mod._digest(meta_json, arrays)
    payload["sha256"] = np.array(digest)
    if key is not None:
        payload["hmac"] = np.array(sign(key, digest.encode()))
    elif keep_tag:
        payload["hmac"] = np.array(old_tag)
    with open(path, "wb") as fh:
        np.savez(fh, **payload)
    solver_mod._MEMO.clear()


def dead_pid() -> int:
    """The pid of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid
