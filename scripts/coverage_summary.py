"""Print a package's test coverage by folder, then its total: one line a capability.

    python scripts/coverage_summary.py DATA_FILE

DATA_FILE is the combined data that `pytest --cov` left (scripts/test.sh writes it for the
mcp_summarizer suite, with the service processes the tests started measured too).  A folder
per line says more than a file per line (150 of them) or one total.
"""

from __future__ import annotations

import contextlib
import sys
from collections import defaultdict
from pathlib import Path

import coverage


def main(data_file: str) -> int:
    cov = coverage.Coverage(data_file=data_file)
    cov.load()
    # Processes that outlived pytest's own combining (the test processes' fork servers end
    # with them) left their data beside the file: add it.
    with contextlib.suppress(coverage.exceptions.NoDataError):
        cov.combine(keep=False)
        cov.save()
    data = cov.get_data()
    files = sorted(data.measured_files())
    if not files:
        print(f"coverage: no data in {data_file}")
        return 1
    root = Path(_common_root(files))
    statements: dict[str, int] = defaultdict(int)
    missing: dict[str, int] = defaultdict(int)
    for name in files:
        _, lines, _, missed, _ = cov.analysis2(name)
        relative = Path(name).relative_to(root)
        folder = relative.parts[0] if len(relative.parts) > 1 else "(root modules)"
        statements[folder] += len(lines)
        missing[folder] += len(missed)
    print(f"coverage of {root.name}/ (statements run by the tests, service processes included):")
    for folder in sorted(statements, key=lambda f: (f == "(root modules)", f)):
        label = folder if folder == "(root modules)" else folder + "/"
        print(f"  {label:<18} {_percent(statements[folder], missing[folder])}")
    total, missed = sum(statements.values()), sum(missing.values())
    print(f"  {'total':<18} {_percent(total, missed)}")
    return 0


def _percent(statements: int, missing: int) -> str:
    covered = statements - missing
    return f"{100 * covered / max(statements, 1):5.1f}%  ({covered:,} of {statements:,} statements)"


def _common_root(files: list[str]) -> str:
    """The package folder: the deepest folder all measured files share."""
    parts = [Path(f).parent.parts for f in files]
    common: list[str] = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return str(Path(*common))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
