"""Locale files: a language the text names in English (or a code it writes in a text about locales) picks the
translation files of that language (evidence.locales)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from brain.search.evidence.locales import CODES, locale_code, named_languages
from brain.search.ranking import gather
from brain.search.signals import extract_signals
from card_helpers import commit_files

NOW = "# Now\n\nFix the bugs.\n"

PHP = {
    "src/Lang/el.php": "<?php\nreturn ['year' => ':count έτος'];\n",
    "src/Lang/el_CY.php": "<?php\nreturn require __DIR__.'/el.php';\n",
    "src/Lang/de.php": "<?php\nreturn ['year' => ':count Jahr'];\n",
    "src/Lang/de_AT.php": "<?php\nreturn array_replace_recursive(require __DIR__.'/de.php', ['months' => ['Jänner']]);\n",
    "src/Traits/Units.php": "<?php\nnamespace Acme;\n\ntrait Units\n{\n    public function addYears($value) { return $value; }\n}\n",
    "src/Translator.php": "<?php\nnamespace Acme;\n\nclass Translator\n{\n    public function translate($key) { return $key; }\n}\n",
}


def test_locale_codes_of_paths():
    assert locale_code("src/Carbon/Lang/de_AT.php") == ("de", "at", "de_at")
    assert locale_code("src/locale/pt-br.js") == ("pt", "br", "pt_br")
    assert locale_code("src/locale/es/_lib/localize/index.ts") == ("es", "", "es")
    assert locale_code("language/phpmailer.lang-fi.php") == ("fi", "", "fi")
    assert locale_code("src/Carbon/Traits/Date.php") is None
    assert locale_code("src/lib/locale/set.js") is None  # not a language's code
    assert locale_code("src/el.php") is None  # not inside a folder of translations


def test_languages_the_text_names():
    assert named_languages(extract_signals("Fix #1749 Shorten Greek year abbreviation")) == ({"el": 1.0}, set())
    assert named_languages(extract_signals("Austria German January variant")) == ({"de": 1.0}, {"at"})
    assert named_languages(extract_signals("fix `tr` locale for pt_BR"))[0] == {"tr": 1.0, "pt_br": 1.0}
    assert named_languages(extract_signals("it is in the locale"))[0] == {}  # English words, not codes
    assert named_languages(extract_signals("use `tr` to strip"))[0] == {}  # not about locales
    assert named_languages(extract_signals("Bug: word wrapping\n\nLong English words overflow."))[0] == {}  # the title only


def test_a_named_language_picks_its_translation_files(brain):
    commit_files(brain, PHP, now=NOW)
    brain.reindex()
    view = brain.index.code_view()
    evidence = gather(view, "Shorten Greek year abbreviation")
    assert evidence.files["src/Lang/el.php"].features["locale"] == 1.0
    assert evidence.files["src/Lang/el_CY.php"].features["locale"] == 0.5  # a region the text does not name
    assert "locale" not in evidence.files["src/Lang/de.php"].features
    found = gather(view, "Austria German January variant")
    assert found.files["src/Lang/de_AT.php"].features["locale"] == 1.0
    assert brain.boot("Shorten Greek year abbreviation", record=False).files[0] == "src/Lang/el.php"


_PIECE = st.one_of(
    st.sampled_from(["lang", "Locale", "i18n", "src", "de_AT", "pt-br", "messages_fr", "x.lang-fi", "el", "zz", ""]),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzAZ_-.0123456789é中", max_size=12),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECE, min_size=1, max_size=6))
def test_locale_code_of_any_path_is_none_or_a_known_language(pieces):
    """Any path (empty pieces, dots, non-ASCII, a long name) reads as no locale or as a known language's code,
    and a path outside every folder of translations whose name does not say `lang` is never one."""
    path = "/".join(pieces)
    found = locale_code(path)
    if found is not None:
        language, region, full = found
        assert language in CODES
        assert full.startswith(language)
        assert full == full.lower() and "-" not in full
        assert region == "" or region in full
    lowered = [p.lower() for p in pieces]
    if not any(p in ("lang", "locale", "i18n") for p in lowered[:-1]) and not any(
            s in lowered[-1] for s in ("lang", "messages", "locale", "language")):
        assert found is None or any(
            p in ("langs", "language", "languages", "locales", "l10n", "translation", "translations", "nls",
                  "localization", "localizations", "l18n") for p in lowered[:-1])
