"""Start-up: whole ``python -m auditor`` processes that do little, against the interpreter.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_startup.py [--before DIR]

Times, each in a fresh process, interleaved run by run so that drift hits all alike:
``python -c pass`` and ``python -c "import requests"`` (floors), then ``auditor --help``,
``auditor walk --help``, ``auditor audit --help`` and ``auditor walk FILE`` of a local
20-URL sitemap written to a temporary folder. The commands run this checkout's code
(``python -m auditor`` from the project root); with ``--before DIR``, also DIR's (a
checkout or a ``git archive`` of an earlier commit), so that both are measured in the
same minutes. Prints each median, quartiles and minimum, and the 1-minute load seen.

Touches: the disk (a temporary folder).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.processes import small_sitemap  # noqa: E402 - the tests' own sitemap

#: URLs in the local sitemap: a small file, so that start-up is what is measured.
URLS = 20
COMMANDS = {
    "auditor --help": ["--help"],
    "auditor walk --help": ["walk", "--help"],
    "auditor audit --help": ["audit", "--help"],
    "auditor walk FILE": ["walk", "{sitemap}"],
}


def cases(sitemap: Path, before: Path | None) -> dict[str, tuple[Path, list[str]]]:
    """Each case's label, working directory and command line."""
    python = sys.executable
    found = {
        "python -c pass": (ROOT, [python, "-c", "pass"]),
        "python -c 'import requests'": (ROOT, [python, "-c", "import requests"]),
    }
    trees = [("after", ROOT)] if before is None else [("before", before), ("after", ROOT)]
    for label, words in COMMANDS.items():
        args = [w.format(sitemap=sitemap) for w in words]
        for tree, where in trees:
            name = label if before is None else f"{label} [{tree}]"
            found[name] = (where, [python, "-m", "auditor", *args])
    return found


def measure(found: dict[str, tuple[Path, list[str]]], runs: int) -> None:
    """Run every case ``runs`` times, interleaved, and print the medians."""
    times: dict[str, list[float]] = {name: [] for name in found}
    loads = [os.getloadavg()[0]]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for _ in range(runs):
        for name, (where, command) in found.items():
            started = time.perf_counter()
            subprocess.run(command, cwd=where, env=env, capture_output=True, check=True)
            times[name].append(time.perf_counter() - started)
        loads.append(os.getloadavg()[0])
    print(f"{runs} runs each, 1-minute load {min(loads):.2f} to {max(loads):.2f}")
    for name, seconds in times.items():
        low, _, high = statistics.quantiles(seconds, n=4)
        print(
            f"{name:34} median {statistics.median(seconds) * 1000:6.1f} ms"
            f"  quartiles {low * 1000:6.1f}-{high * 1000:6.1f}  min {min(seconds) * 1000:6.1f}"
        )


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="runs of each case (default 21)")
    parser.add_argument("--before", type=Path, help="an earlier checkout to time alongside")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        measure(cases(small_sitemap(Path(folder), URLS), args.before), args.runs)


if __name__ == "__main__":
    main()
