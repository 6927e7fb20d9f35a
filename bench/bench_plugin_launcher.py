"""Cost of the plugins' launcher (plugins/brain/scripts/brain-run) on every hook and server start.

Baseline in the same run: the same `brain` run directly (what `brain install` writes). Measured,
interleaved so machine load hits both sides alike, as cold processes with `--version`:

- ``direct``: the `brain` console script of this venv, by absolute path;
- ``launcher``: `/bin/sh brain-run --version` with that `brain` on PATH (the launcher's first choice
  after $BRAIN_PLUGIN_COMMAND: `command -v brain`, then exec);
- ``inline``: the same lines as Codex runs them, `sh -c '<launcher>' brain-run --version`.

CPU is the child's user + system time (from wait4), wall the elapsed time; load is the machine's
1-minute load average before and after.

    python bench/bench_plugin_launcher.py [--runs 40]      # writes bench/results/plugin_launcher.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LAUNCHER = HERE.parent / "plugins" / "brain" / "scripts" / "brain-run"


def _once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited {proc.returncode}")
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    brain = Path(sys.executable).parent / "brain"
    env = {"PATH": f"{brain.parent}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}
    body = LAUNCHER.read_text(encoding="utf-8").split("# -- launcher --\n", 1)[1]
    cases = {"direct": [str(brain), "--version"], "launcher": ["/bin/sh", str(LAUNCHER), "--version"],
             "inline": ["/bin/sh", "-c", body, "brain-run", "--version"]}
    load_before = os.getloadavg()[0]
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for name, argv in cases.items():  # one warm-up each
        _once(argv, env)
    for _ in range(args.runs):
        for name, argv in cases.items():
            samples[name].append(_once(argv, env))
    load_after = os.getloadavg()[0]
    result = {"runs": args.runs, "load_before": round(load_before, 2), "load_after": round(load_after, 2)}
    for name, rows in samples.items():
        result[name] = {"wall_ms_median": round(statistics.median(w for w, _ in rows), 2),
                        "cpu_ms_median": round(statistics.median(c for _, c in rows), 2)}
    for name in ("launcher", "inline"):
        result[name]["wall_ms_over_direct"] = round(result[name]["wall_ms_median"] - result["direct"]["wall_ms_median"], 2)
        result[name]["cpu_ms_over_direct"] = round(result[name]["cpu_ms_median"] - result["direct"]["cpu_ms_median"], 2)
    print(json.dumps(result, indent=2))
    out = HERE / "results" / "plugin_launcher.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
