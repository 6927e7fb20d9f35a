"""`brain demo`: what brain does, shown on a small generated project, in seconds, inside one temp folder.

A newcomer's first command in a clone of brain itself used to boot the team's own now.md: true, but
it shows nothing of the product. The demo makes a small shop project (a git repository with a few
modules and a real bug), then runs what an agent would meet: the module card `brain map` writes, a
task boot that ranks the file and the function a bug report is about, and two sessions whose claims
overlap. Everything, the user-level state included (``BRAIN_HOME``), lives in the demo's folder, so
nothing is written outside it; `--ui` serves the web UI over the demo brain afterwards.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from .errors import InvalidInput

__all__ = ["PROJECT", "TASK", "make_project", "run_demo"]

PROJECT = {
    "shop/__init__.py": '"""A small shop: carts, prices, payments."""\n',
    "shop/cart.py": '''"""The cart a customer fills before paying."""

from .pricing import apply_discount, with_tax


class Cart:
    def __init__(self, customer: str) -> None:
        self.customer = customer
        self.items: list[tuple[str, int, float]] = []
        self.coupon: str | None = None

    def add_item(self, sku: str, quantity: int, price: float) -> None:
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self.items.append((sku, quantity, price))

    def subtotal(self) -> float:
        return sum(quantity * price for _, quantity, price in self.items)

    def total(self) -> float:
        amount = self.subtotal()
        if self.coupon:
            amount = apply_discount(amount, self.coupon)
        return with_tax(amount)
''',
    "shop/pricing.py": '''"""Prices: coupons and tax."""

COUPONS = {"WELCOME10": 0.10, "VIP25": 0.25}
TAX_RATE = 0.2


def apply_discount(amount: float, coupon: str) -> float:
    rate = COUPONS.get(coupon)  # bug: codes are stored upper-case, customers type them as they like
    if rate is None:
        raise KeyError(f"unknown coupon {coupon}")
    return amount * (1 - rate)


def with_tax(amount: float) -> float:
    return round(amount * (1 + TAX_RATE), 2)
''',
    "shop/payments.py": '''"""Charging a customer's card for a cart."""

from .cart import Cart


class PaymentError(Exception):
    pass


def charge(cart: Cart, card_number: str) -> dict:
    total = cart.total()
    if total <= 0:
        raise PaymentError("nothing to charge")
    return {"customer": cart.customer, "charged": total, "card": card_number[-4:]}
''',
    "shop/api.py": '''"""The HTTP handlers of the shop (framework-free for the demo)."""

from .cart import Cart
from .payments import charge

CARTS: dict[str, Cart] = {}


def post_item(customer: str, sku: str, quantity: int, price: float) -> dict:
    cart = CARTS.setdefault(customer, Cart(customer))
    cart.add_item(sku, quantity, price)
    return {"subtotal": cart.subtotal()}


def post_checkout(customer: str, card_number: str, coupon: str | None = None) -> dict:
    cart = CARTS[customer]
    cart.coupon = coupon
    return charge(cart, card_number)
''',
    "tests/test_cart.py": '''from shop.cart import Cart


def test_subtotal():
    cart = Cart("ada")
    cart.add_item("book", 2, 10.0)
    assert cart.subtotal() == 20.0
''',
    "README.md": "# shop\n\nA tiny shop used by `brain demo`.\n",
}

TASK = """Checkout fails when the coupon code is typed in lower case

Customers who type `welcome10` instead of WELCOME10 get an error page at checkout.

Traceback (most recent call last):
  File "shop/api.py", line 17, in post_checkout
    return charge(cart, card_number)
  File "shop/payments.py", line 11, in charge
    total = cart.total()
  File "shop/cart.py", line 24, in total
    amount = apply_discount(amount, self.coupon)
  File "shop/pricing.py", line 10, in apply_discount
    raise KeyError(f"unknown coupon {coupon}")
KeyError: 'unknown coupon welcome10'
"""


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "brain demo", "GIT_AUTHOR_EMAIL": "demo@example.invalid",
           "GIT_COMMITTER_NAME": "brain demo", "GIT_COMMITTER_EMAIL": "demo@example.invalid"}
    subprocess.run(["git", "-c", "core.hooksPath=" + os.devnull, *args], cwd=repo, env=env, check=True,
                   capture_output=True, timeout=60)


def make_project(root: Path) -> Path:
    """The demo's shop project as a git repository with one commit, under ``root``."""
    repo = root / "shop"
    for rel, text in PROJECT.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "shop: carts, prices, payments")
    return repo


def _folder(where: str | None) -> Path:
    if where is None:
        return Path(tempfile.mkdtemp(prefix="brain-demo-"))
    root = Path(where).expanduser().absolute()
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise InvalidInput(f"{root} exists and is not an empty folder", field="dir",
                           hint="give a new or empty folder, or leave --dir out for a temp folder")
    root.mkdir(parents=True, exist_ok=True)
    return root


def run_demo(where: str | None = None, *, say=print) -> dict:
    """Make the project, its brain, a card, a task boot and an overlap; ``say`` gets each step's lines.
    Returns what was shown (the `--json` object). ``BRAIN_HOME`` points into the demo folder for the rest
    of this process, so the demo's sessions and settings never reach the user's own."""
    import brain as brainlib

    started = time.perf_counter()
    root = _folder(where)
    home = root / "home"
    home.mkdir(exist_ok=True)
    os.environ["BRAIN_HOME"] = str(home)
    env = {**os.environ, "BRAIN_HOME": str(home)}
    repo = make_project(root)
    b = brainlib.init(repo, env=env)
    say(f"1. A small project: {repo} (a git repository: shop/cart.py, pricing.py, payments.py, api.py)")

    report = b.map()
    card = b.memory.read_or_none("modules/shop.md")
    card_lines = (card.text if card else "").strip().splitlines()
    say(f"\n2. `brain map` wrote {len(report.written)} module card(s) in {report.seconds:.2f} s; the card of "
        f"`shop` (.brain/modules/shop.md), which every boot about the module carries, begins:")
    for line in [line for line in card_lines if not line.startswith("<!--")][:12]:
        say(f"   | {line}")

    (root / "bug.txt").write_text(TASK, encoding="utf-8")
    result = b.boot(TASK)
    say(f"\n3. A task boot for a bug report (`brain boot --task-file ../bug.txt`): {result.tokens} tokens of "
        f"a {result.budget} budget. The files it ranks first:")
    for rank, path in enumerate(result.files[:4], 1):
        say(f"   {rank}. {path}")
    functions = [f.get("qual") or f.get("name") for f in result.functions[:3]]
    if functions:
        say("   and the functions: " + ", ".join(f"`{f}`" for f in functions if f))

    alice = b.coord.start_session("alice").id
    bob = b.coord.start_session("bob").id
    first = b.coord.claim(alice, "shop/pricing.py")
    second = b.coord.claim(bob, "shop/")
    say(f"\n4. Two agents: {alice} claims shop/pricing.py, {bob} claims shop/.")
    for overlap in second.overlaps:
        say(f"   brain reports the overlap to {bob}: {overlap.item} is held by {overlap.session} (claim {overlap.claim})")
    elapsed = time.perf_counter() - started
    say(f"\nDone in {elapsed:.1f} s. Everything is in {root} (BRAIN_HOME included); delete it when done.")
    say(f"   Explore:  cd {repo} && BRAIN_HOME={home} brain claims")
    say(f"   Web UI:   BRAIN_HOME={home} brain -C {repo} ui     (or `brain demo --ui`)")
    return {"folder": str(root), "project": str(repo), "brain_home": str(home),
            "card": "modules/shop.md" if card else None, "boot": {"tokens": result.tokens, "budget": result.budget,
                                                                  "files": result.files[:5], "functions": functions},
            "sessions": [alice, bob], "claims": [first.to_dict(), second.to_dict()],
            "overlaps": [o.to_dict() for o in second.overlaps], "seconds": round(elapsed, 2)}
