"""Task localization: signals from the text, ranking of files, and the boot's "Files for this task"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from brain.search.locate import extract_signals
from brain.tokens import estimate_tokens


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def app(brain):
    repo = brain.repo
    _write(repo, "app/__init__.py", "from app.billing.invoice import Invoice\n")
    _write(repo, "app/billing/__init__.py", "")
    _write(repo, "app/billing/invoice.py", "from app.billing.tax import vat_for\n\nclass Invoice:\n"
                                           "    def total(self):\n        return vat_for(self)\n")
    _write(repo, "app/billing/tax.py", "def vat_for(invoice):\n    raise ValueError('unknown country code')\n")
    _write(repo, "app/web/views.py", "from app.billing.invoice import Invoice\n\ndef invoice_page(request):\n"
                                     "    return Invoice().total()\n")
    _write(repo, "app/web/urls.py", "ROUTES = ['invoice_page']\n")
    _write(repo, "tests/test_invoice.py", "class Invoice:\n    pass\n\ndef test_total():\n    pass\n")
    _write(repo, "frontend/src/cartStore.ts", "export class CartStore {\n  addItem(id: string) {}\n}\n"
                                             "export function emptyCart() {}\n")
    brain.write("now.md", "# Now\n\nShip the invoice fix.\n")
    return brain


def test_signals_from_a_traceback_paths_and_dotted_names():
    text = ("Invoice.total() crashes\n"
            "Traceback (most recent call last):\n"
            '  File "/srv/venv/lib/site-packages/app/web/views.py", line 4, in invoice_page\n'
            '  File "/srv/venv/lib/site-packages/app/billing/tax.py", line 2, in vat_for\n'
            "ValueError: unknown country code\n"
            "See app/web/urls.py and app.billing.invoice.Invoice, also `emptyCart`.")
    sig = extract_signals(text)
    assert [f for f, _ in sig.frames] == ["/srv/venv/lib/site-packages/app/web/views.py",
                                          "/srv/venv/lib/site-packages/app/billing/tax.py"]
    assert [p for p, _ in sig.paths] == ["app/web/urls.py"]
    assert "app.billing.invoice.Invoice" in sig.dotted
    assert sig.idents["emptyCart"] >= 1.0 and sig.idents["Invoice"] > sig.idents["also"] if "also" in sig.idents else True
    assert extract_signals("").idents == {} and extract_signals(None).frames == []


def test_the_deepest_traceback_frame_ranks_first(app):
    text = ("Checkout fails for Monaco\n"
            '  File "/srv/venv/lib/site-packages/app/web/views.py", line 4, in invoice_page\n'
            '  File "/srv/venv/lib/site-packages/app/billing/invoice.py", line 5, in total\n'
            '  File "/srv/venv/lib/site-packages/app/billing/tax.py", line 2, in vat_for\n'
            "ValueError: unknown country code\n")
    assert app.locate(text).paths[0] == "app/billing/tax.py"


def test_paths_modules_and_symbols_point_at_their_files(app):
    assert app.locate("Wrong routes in app/web/urls.py").paths[0] == "app/web/urls.py"
    assert app.locate("Importing app.billing.tax is slow").paths[0] == "app/billing/tax.py"
    # a package re-export is followed to the module that defines the name
    assert app.locate("from app import Invoice gives a stale total").paths[0] == "app/billing/invoice.py"
    assert app.locate("Invoice.total() rounds the wrong way").paths[0] == "app/billing/invoice.py"
    assert app.locate("CartStore.addItem adds twice").paths[0] == "frontend/src/cartStore.ts"
    assert app.locate("vat_for ignores reduced rates").paths[0] == "app/billing/tax.py"


def test_test_files_are_never_the_answer(app):
    ranked = app.locate("Invoice test_total fails in tests/test_invoice.py").paths
    assert ranked[0] != "tests/test_invoice.py"
    assert all(not p.startswith("tests/") for p in ranked[: len(ranked) - 1])


def test_changed_files_join_the_ranking(app):
    subprocess.run(["git", "add", "-A"], cwd=app.repo, check=True, capture_output=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "app"],
                   cwd=app.repo, check=True, capture_output=True)
    _write(app.repo, "app/web/urls.py", "ROUTES = ['invoice_page', 'home']\n")
    hit = {h.path: h for h in app.locate("something about the web layer").files}
    assert "changed in the working tree" in hit["app/web/urls.py"].reasons


def test_boot_files_lead_with_the_ranking_and_the_text_names_them(app):
    text = "Invoice.total() ignores the VAT returned by vat_for"
    result = app.boot(text, record=False)
    ranked = app.locate(text).paths
    assert result.files[: len(ranked)] == ranked
    assert result.files[0] == "app/billing/invoice.py"
    assert result.text.index("Now (.brain/now.md)") < result.text.index("Files for this task")
    assert "`app/billing/invoice.py`" in result.text
    assert result.sections[0]["slot"] == "now"


@pytest.mark.parametrize("task", [
    "",
    "   \n\t ",
    "x" * 2_000_000,
    ("Invoice " * 50_000) + "\n" + "app/billing/tax.py " * 10_000,
    "Le total de la facture est faux quand le pays est Monaco, merci de corriger.",
    "发票总额在摩纳哥计算错误，请修复。",
    "Please make the onboarding email friendlier.",
    "\x00\x01 ``` ))) ((( \\\\ \"\" ''",
])
def test_bad_tasks_give_a_valid_boot_within_budget_now_first(app, task):
    result = app.boot(task, budget=2000, record=False)
    assert result.tokens <= 2000 and estimate_tokens(result.text) <= 2000
    assert result.sections[0]["slot"] == "now"
    assert "Ship the invoice fix." in result.text
    assert len(set(result.files)) == len(result.files)


def test_boot_without_an_index_or_with_search_disabled_still_works(app):
    app.settings.values["search.enabled"] = False
    result = app.boot("Invoice.total() is wrong", record=False)
    assert "Files for this task" not in result.text and result.files == []
    assert not (app.runtime / "index.db").exists()


def test_boot_cli_json_files(app):
    out = subprocess.run([sys.executable, "-m", "brain", "-C", str(app.repo), "boot", "--task",
                          "vat_for raises ValueError: unknown country code", "--json", "--no-record"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["files"][0] == "app/billing/tax.py" and data["tokens"] <= data["budget"]


@pytest.mark.parametrize("text", ["a/" * 5000, "a.b/" * 3000, "a-" * 5000, "x (" * 5000, "x" * 100_000,
                                  "File \"" * 3000, "a.py/" * 3000])
def test_pathological_texts_are_read_in_linear_time(text):
    # these shapes made nested patterns backtrack for minutes; they must come back at once
    sig = extract_signals(text)
    assert isinstance(sig.paths, list)


from hypothesis import given, settings, strategies as st  # noqa: E402


@given(st.text(alphabet=st.sampled_from(list("aZ_./\\-:( \n\"'`0éFile,line")), max_size=400))
@settings(max_examples=150, deadline=None)
def test_signals_never_fail_on_any_text(text):
    sig = extract_signals(text)
    assert all(isinstance(w, float) for w in sig.idents.values())
    assert all("\n" not in p for p, _ in sig.paths)


def test_boot_infers_the_module_from_the_task_when_cards_exist(app):
    assert app.boot("vat_for raises for Monaco", record=False).text.count("Module card") == 0  # no cards yet
    app.map()
    result = app.boot("vat_for raises for Monaco", record=False)
    assert "Module card: `app`" in result.text
    assert result.files[0] == "app/billing/tax.py"  # the ranking still leads the files
    # a text with no evidence beyond loose words does not pick a module
    vague = app.boot("Please make the onboarding email friendlier.", record=False)
    assert "Module card" not in vague.text
    # a module the caller gives wins over inference
    given = app.boot("vat_for raises for Monaco", module="frontend", record=False)
    assert "Module card: `app`" not in given.text


def test_boot_lists_memory_matching_the_task_bounded(app):
    app.write("notes/monaco.md", "# Monaco VAT\n\nMonaco invoices use the French VAT rules since 2021.\n"
              + ("filler line about nothing in particular\n" * 400))
    result = app.boot("VAT is wrong on Monaco invoices", record=False)
    section = result.text.split("## Memory matching the task (search)", 1)[1].split("\n## ", 1)[0]
    assert "`notes/monaco.md` (note)" in section
    assert "filler line" not in section or len(section) < 600
    assert "now.md` (now)" not in section  # what the boot already holds is not repeated
    assert app.boot(None, record=False).text.count("Memory matching the task") == 0


def test_a_boot_without_a_task_never_imports_the_search_package(app):
    code = ("import sys, brain; b = brain.open(sys.argv[1]); b.boot(None, record=False); "
            "b.write('notes/n.md', '# n\\n'); print('brain.search' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(app.repo)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_one_boot_extracts_the_task_signals_once_and_leaves_them_as_they_were(app, monkeypatch):
    """Module inference, the files slot, the function ranking and the code slot share one extraction."""
    from brain.search import signals

    made = []
    real = signals._extract

    def counting(text, strip_urls):
        made.append(real(text, strip_urls))
        return made[-1]

    monkeypatch.setattr(signals, "_extract", counting)
    text = "vat_for raises ValueError in app/billing/tax.py when Invoice.total() runs for Monaco"
    result = app.boot(text, record=False)
    assert "app/billing/tax.py" in result.text
    assert len(made) == 1
    assert vars(made[0]) == vars(real(text, True))  # no caller changed them (a record: its fields are its dict)
    extract_signals(text)
    extract_signals(text)
    assert len(made) == 3  # outside a boot nothing is kept
