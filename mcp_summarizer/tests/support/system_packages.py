"""The Debian packages some tests need, read from the one list that installs them.

``scripts/system-packages.txt`` names each package and what shows it is there;
``scripts/test.sh`` (and so CI) installs the missing ones first.  A test that needs one marks
itself with ``needs("redis-server")``: it runs where the package is there and skips, naming
the package and how to get it, only where it could not be had.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

LIST = Path(__file__).resolve().parents[3] / "scripts" / "system-packages.txt"


def _checks() -> dict[str, str]:
    checks = {}
    for line in LIST.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            package, check, *_ = line.split()
            checks[package] = check
    return checks


CHECKS = _checks()


def present(package: str) -> bool:
    kind, _, what = CHECKS[package].partition(":")  # a KeyError names a package not on the list
    return shutil.which(what) is not None if kind == "command" else Path(what).exists()


def needs(package: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        not present(package),
        reason=f"needs Debian's {package}: `bash scripts/system-packages.sh` (as root) installs it",
    )
