"""Writers killed with SIGKILL at random moments never leave a torn memory file."""

from __future__ import annotations

import hashlib
import os
import random
import select
import signal
import subprocess
import sys
import textwrap

import pytest

WRITER = textwrap.dedent("""
    import hashlib, sys
    import brain
    b = brain.open(sys.argv[1])
    me = sys.argv[2]
    i = 0
    while True:
        i += 1
        body = f"writer {me} version {i}\\n" + ("payload line for the torn-write check\\n" * (50 + i % 200))
        text = body + "sha256 " + hashlib.sha256(body.encode()).hexdigest() + "\\n"
        b.write("now.md" if i % 2 else f"notes/shared.md", text)
        print(i, flush=True)
""")


def intact(text: str) -> bool:
    body, _, last = text.rpartition("sha256 ")
    return last.strip() == hashlib.sha256(body.encode()).hexdigest()


def read_line(proc, timeout: float) -> str:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise AssertionError("writer produced nothing within the bound")
    return proc.stdout.readline()


@pytest.mark.parametrize("round_", range(3))
def test_sigkill_during_writes_leaves_old_or_new_never_torn(brain, round_):
    brain.write("now.md", "# Now\n\nstart\n")
    rng = random.Random(round_)
    for wave in range(4):
        procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(brain.repo), f"{wave}-{n}"],
                                  stdout=subprocess.PIPE, text=True) for n in range(4)]
        try:
            for proc in procs:
                for _ in range(rng.randint(1, 15)):  # let it get a random way into its writes
                    assert read_line(proc, 30)
                os.kill(proc.pid, signal.SIGKILL)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                proc.wait(timeout=30)
                proc.stdout.close()
        for rel in ("now.md", "notes/shared.md"):
            doc = brain.memory.read_or_none(rel)
            if doc is None:
                continue
            assert doc.text == "# Now\n\nstart\n" or intact(doc.text), f"{rel} is torn"
    # a later write still works: no lock was left held by the killed writers
    brain.write("now.md", "# Now\n\nafter the crash\n")
    assert brain.read("now.md").text == "# Now\n\nafter the crash\n"
