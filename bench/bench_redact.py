"""Benchmark of the secret redactor: time per KB from 1 KB to 1 MB, adversarial and normal text.

    .venv/bin/python bench/bench_redact.py             # 1, 4, 16, 64, 256, 1024 KB
    .venv/bin/python bench/bench_redact.py --max-kb 256

Each input is built by repeating a unit up to the size: runs of key characters, prefixes of
every rule left incomplete (``AKIA``, ``-----BEGIN``, ``password=``, ``ghp_``, ``eyJ``,
``scheme://user:``), long base64, many ``=`` signs, and normal markdown and code (with and
without real secret shapes). A backtracking pattern shows up as time per KB growing with
the size; linear code keeps it flat. Prints, per input, the time per KB at each size and
the ratio of the time per KB at the largest size to the one at 1 KB (flat means about 1;
small sizes carry a fixed cost per call, so below 1 is normal), the same ratio for
normal text measured in the same process, and writes bench/results/redact.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from brain.security.redact import Redactor  # noqa: E402

SIZES_KB = (1, 4, 16, 64, 256, 1024)
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def random_run(alphabet: str, size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(size))


MARKDOWN = """# Notes on the parser

We decided to keep the token cache per session: the `TOKEN_LIMIT=10` setting bounds it and
`password = getpass()` asks the user at start. See [the card](modules/parser.md) and run
`brain boot --task "fix the cache"` before editing. Next: measure the p95 of `record_turn`.

```python
def connect(url: str, *, timeout: float = 3.0) -> Connection:
    password = os.environ.get("DB_PASSWORD")  # never a literal
    token = next_token(stream)
    return psycopg.connect(url, password=password, connect_timeout=timeout)
```

- claim `src/brain/log/**` before the refactor; release it after the merge;
- the key: value pairs of brain.yml are documented in README.md (max_tokens: 4096).
"""

WITH_SECRETS = MARKDOWN + ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
                           "use sk-ant-api03-A1b2C3d4E5f6G7h8I9j0 then postgresql://app:hunter2pass@db/x\n")


def inputs() -> dict[str, tuple[str, object]]:
    """name -> (kind, builder(size) -> text)."""
    return {
        "normal_markdown": ("normal", lambda n: repeat(MARKDOWN, n)),
        "normal_with_secrets": ("normal", lambda n: repeat(WITH_SECRETS, n)),
        "key_run_upper": ("adversarial", lambda n: "A" * n),
        "key_run_mixed": ("adversarial", lambda n: random_run(B64[:62] + "_-", n)),
        "base64_run": ("adversarial", lambda n: random_run(B64 + "=", n)),
        "akia_prefixes": ("adversarial", lambda n: repeat("AKIA", n)),
        "akia_spaced": ("adversarial", lambda n: repeat("AKIA1234 ", n)),
        "pem_begin_unterminated": ("adversarial", lambda n: repeat("-----BEGIN PRIVATE KEY-----\n", n)),
        "pem_begin_partial": ("adversarial", lambda n: repeat("-----BEGIN RSA ", n)),
        "pem_body_lines": ("adversarial", lambda n: "-----BEGIN PRIVATE KEY-----" + repeat("\n" + "A" * 15, n)),
        "password_eq": ("adversarial", lambda n: repeat("password=", n)),
        "password_quote": ("adversarial", lambda n: repeat("password='", n)),
        "token_colon_spaces": ("adversarial", lambda n: repeat("TOKEN:        ", n)),
        "ghp_prefixes": ("adversarial", lambda n: repeat("ghp_", n)),
        "sk_prefixes": ("adversarial", lambda n: repeat("sk-", n)),
        "jwt_partial": ("adversarial", lambda n: repeat("eyJ-", n)),
        "jwt_two_segments": ("adversarial", lambda n: repeat("eyJabcdefgh.eyJabcdefgh-", n)),
        "url_userinfo_partial": ("adversarial", lambda n: repeat("a://b:", n)),
        "url_colons": ("adversarial", lambda n: "x://" + ":" * (n - 4)),
        "url_scheme_run": ("adversarial", lambda n: repeat("a.", n - 3) + "://"),
        "equals": ("adversarial", lambda n: "=" * n),
        "key_equals": ("adversarial", lambda n: repeat("a=", n)),
        "mixed_fragments": ("adversarial", lambda n: random_fragments(n)),
    }


def random_fragments(size: int, seed: int = 11) -> str:
    rng = random.Random(seed)
    parts = ["AKIA", "-----BEGIN ", "PRIVATE KEY-----", "password=", "secret: ", "ghp_", "eyJ", ".", "://",
             "user:", "@", "=", "'", '"', "sk-", "xoxb-", "brn_", "A" * 20, "\n", " "]
    out, length = [], 0
    while length < size:
        part = rng.choice(parts)
        out.append(part)
        length += len(part)
    return "".join(out)[:size]


def time_per_kb(redactor: Redactor, texts: dict[int, str], rounds: int) -> dict[int, float]:
    """Best time per KB (microseconds) of each size over ``rounds`` interleaved rounds.

    The sizes of one input are measured in turn within each round, so a burst of load from
    other processes (the machine is shared) lands on every size alike instead of on one;
    small sizes are called in batches (256 KB of text per sample) so a sample is not noise."""
    best: dict[int, float] = {}
    for _ in range(rounds):
        for kb, text in texts.items():
            calls = max(1, 256 // kb)
            start = time.perf_counter()
            for _ in range(calls):
                redactor.redact(text)
            per_kb = (time.perf_counter() - start) / calls / kb * 1e6
            best[kb] = min(best.get(kb, per_kb), per_kb)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-kb", type=int, default=SIZES_KB[-1])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds; the best of them is kept")
    parser.add_argument("--no-write", action="store_true", help="do not write bench/results/redact.json")
    args = parser.parse_args()
    sizes = [kb for kb in SIZES_KB if kb <= args.max_kb]
    redactor = Redactor()
    redactor.redact("warm up: compile the rules sk-" + "a" * 20)
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs")
    header = "input".ljust(24) + "".join(f"{kb:>9} KB" for kb in sizes) + "   ratio"
    print("time per KB (microseconds)\n" + header)
    results: dict = {"load_average": load, "cpus": os.cpu_count(), "sizes_kb": sizes, "unit": "us_per_kb",
                     "rounds": args.rounds, "inputs": {}}
    for name, (kind, build) in inputs().items():
        best = time_per_kb(redactor, {kb: build(kb * 1024) for kb in sizes}, args.rounds)
        per_kb = [best[kb] for kb in sizes]
        ratio = per_kb[-1] / per_kb[0]
        results["inputs"][name] = {"kind": kind, "us_per_kb": [round(x, 2) for x in per_kb], "ratio": round(ratio, 2)}
        print(name.ljust(24) + "".join(f"{x:12.1f}" for x in per_kb) + f"   {ratio:5.2f}", flush=True)
    adversarial = [v for v in results["inputs"].values() if v["kind"] == "adversarial"]
    normal_largest = max(v["us_per_kb"][-1] for v in results["inputs"].values() if v["kind"] == "normal")
    worst = max(adversarial, key=lambda v: v["ratio"])
    slowest = max(v["us_per_kb"][-1] for v in adversarial)
    results["summary"] = {
        "worst_ratio_adversarial": worst["ratio"],
        "worst_ratio_normal": max(v["ratio"] for v in results["inputs"].values() if v["kind"] == "normal"),
        "slowest_adversarial_vs_normal_at_largest": round(slowest / normal_largest, 2),
    }
    print(f"worst ratio (time/KB at {sizes[-1]} KB over 1 KB): adversarial {results['summary']['worst_ratio_adversarial']}, "
          f"normal {results['summary']['worst_ratio_normal']}; slowest adversarial input at {sizes[-1]} KB is "
          f"{results['summary']['slowest_adversarial_vs_normal_at_largest']}x the time of normal text")
    results["load_average_after"] = os.getloadavg()
    print(f"load average after: {results['load_average_after'][0]:.1f}")
    if not args.no_write:
        out = ROOT / "bench" / "results" / "redact.json"
        out.write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
