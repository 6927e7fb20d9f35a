"""Evidence of locales: a natural language the text names picks the translation files of that language.

Projects that translate (date and time libraries, mailers, form validators, CLIs) keep one file or folder
per locale, named by its ISO 639 code and sometimes a region (`Lang/el.php`, `lang/de_AT.php`,
`locale/pt-br.js`, `locale/es/_lib/localize/index.ts`, `language/phpmailer.lang-fi.php`). A report about
a translation names the language in English (`Shorten Greek year abbreviation`, `Fix Croatian after/before
translations`) and never the file: no word of the text is in its path or its body (the file holds the
translated words), so the other kinds leave it out. Here an English language name (``LANGUAGES``) in the
title, or a locale code a title about locales writes (`[locale] hu: ...`, ``fix `tr` locale``, `pt_BR`), gives
the repository's locale files of that language 1.0 (a region or script variant, `zh_TW` for `Chinese`, 0.5;
1.0 when the title also names the region's country). The title only: a report's body names languages in
passing (`in plain English`, the locales a setting lists). A locale file is one whose stem (or a folder right
below a folder of locales) is a locale code inside a folder named for translations (``LOCALE_DIRS``), or whose
stem says `lang`: a repository without one gets nothing, and its tree is read only when the title names a
language.
"""

from __future__ import annotations

import re

from ...lazyre import lazy

__all__ = ["collect", "locale_code", "LANGUAGES", "COUNTRIES"]

# English names of languages (and a few adjectives) -> ISO 639 codes; names that are also common words
# (`Latin`, `Standard`) or programming languages are left out
LANGUAGES = {
    "afrikaans": "af", "albanian": "sq", "amharic": "am", "arabic": "ar", "armenian": "hy", "assamese": "as",
    "azerbaijani": "az", "azeri": "az", "basque": "eu", "belarusian": "be", "bengali": "bn", "bangla": "bn",
    "bosnian": "bs", "breton": "br", "bulgarian": "bg", "burmese": "my", "catalan": "ca", "cebuano": "ceb",
    "chinese": "zh", "mandarin": "zh", "cantonese": "yue", "corsican": "co", "croatian": "hr", "czech": "cs",
    "danish": "da", "dutch": "nl", "flemish": "nl", "english": "en", "esperanto": "eo", "estonian": "et",
    "faroese": "fo", "filipino": "fil", "tagalog": "tl", "finnish": "fi", "french": "fr", "frisian": "fy",
    "friulian": "fur", "galician": "gl", "georgian": "ka", "german": "de", "greek": "el", "gujarati": "gu",
    "haitian": "ht", "hausa": "ha", "hawaiian": "haw", "hebrew": "he", "hindi": "hi", "hungarian": "hu",
    "icelandic": "is", "igbo": "ig", "indonesian": "id", "interlingua": "ia", "irish": "ga", "gaelic": "gd",
    "italian": "it", "japanese": "ja", "javanese": "jv", "kannada": "kn", "kazakh": "kk", "khmer": "km",
    "kinyarwanda": "rw", "korean": "ko", "kurdish": "ku", "kyrgyz": "ky", "lao": "lo", "latvian": "lv",
    "lithuanian": "lt", "luxembourgish": "lb", "macedonian": "mk", "malagasy": "mg", "malay": "ms",
    "malayalam": "ml", "maltese": "mt", "maori": "mi", "marathi": "mr", "mongolian": "mn", "nepali": "ne",
    "norwegian": "nb", "bokmal": "nb", "nynorsk": "nn", "occitan": "oc", "oriya": "or", "pashto": "ps",
    "persian": "fa", "farsi": "fa", "polish": "pl", "portuguese": "pt", "punjabi": "pa", "romanian": "ro",
    "moldavian": "ro", "romansh": "rm", "russian": "ru", "samoan": "sm", "sanskrit": "sa", "serbian": "sr",
    "serbo-croatian": "sh", "sindhi": "sd", "sinhala": "si", "slovak": "sk", "slovenian": "sl",
    "slovene": "sl", "somali": "so", "spanish": "es", "castilian": "es", "sundanese": "su", "swahili": "sw",
    "swedish": "sv", "tajik": "tg", "tamil": "ta", "tamazight": "zgh", "tatar": "tt", "telugu": "te",
    "thai": "th", "tibetan": "bo", "tigrinya": "ti", "turkish": "tr", "turkmen": "tk", "ukrainian": "uk",
    "urdu": "ur", "uyghur": "ug", "uzbek": "uz", "vietnamese": "vi", "welsh": "cy", "xhosa": "xh",
    "yiddish": "yi", "yoruba": "yo", "zulu": "zu",
}
# countries (and their adjectives) -> ISO 3166 region codes, for region variants (`de_AT`, `pt-br`)
COUNTRIES = {
    "argentina": "ar", "argentinian": "ar", "austria": "at", "austrian": "at", "australia": "au",
    "australian": "au", "belgium": "be", "belgian": "be", "brazil": "br", "brazilian": "br", "canada": "ca",
    "canadian": "ca", "switzerland": "ch", "swiss": "ch", "chile": "cl", "chilean": "cl", "china": "cn",
    "colombia": "co", "colombian": "co", "germany": "de", "dominican": "do", "egypt": "eg", "egyptian": "eg",
    "spain": "es", "france": "fr", "britain": "gb", "british": "gb", "hong": "hk", "india": "in",
    "indian": "in", "ireland": "ie", "israel": "il", "israeli": "il", "iraq": "iq", "iran": "ir",
    "jordan": "jo", "kuwait": "kw", "lebanon": "lb", "liechtenstein": "li", "libya": "ly", "luxembourg": "lu",
    "morocco": "ma", "moroccan": "ma", "macau": "mo", "macao": "mo", "mexico": "mx", "mexican": "mx",
    "netherlands": "nl", "norway": "no", "zealand": "nz", "peru": "pe", "philippines": "ph", "portugal": "pt",
    "qatar": "qa", "russia": "ru", "saudi": "sa", "singapore": "sg", "syria": "sy", "tunisia": "tn",
    "taiwan": "tw", "taiwanese": "tw", "ukraine": "ua", "american": "us", "america": "us", "usa": "us",
    "venezuela": "ve", "africa": "za",
}
CODES = frozenset(LANGUAGES.values())
# codes that are also English words: a text about locales writes them as words, not as codes
COMMON_WORDS = frozenset({"am", "an", "as", "be", "id", "in", "is", "it", "my", "no", "or", "so", "to", "he"})
LOCALE_DIRS = frozenset({"lang", "langs", "language", "languages", "locale", "locales", "i18n", "l10n",
                         "translation", "translations", "nls", "localization", "localizations", "l18n"})
LOCALE_WORDS = frozenset({"locale", "locales", "translation", "translations", "language", "languages", "lang",
                          "i18n", "l10n", "localization", "localisation"})
_CODE = lazy(r"^([a-z]{2,3})(?:[-_]([a-z]{2}|\d{3}|[a-z]{4}))?(?:[-_]([a-z]{2}))?$")
_LANG_PREFIX = lazy(r"^(?:lang|language|locale|messages)[-_.]")
TITLE, VARIANT = 1.0, 0.5


def locale_code(path: str) -> tuple[str, str, str] | None:
    """(language, region, full code) of a locale file, lower case (`src/Lang/de_AT.php` -> ("de", "at", "de_at");
    `Lang/sr_Latn.php` -> ("sr", "latn", "sr_latn"); `locale/es/_lib/x.ts` -> ("es", "", "es")), else None."""
    parts = path.lower().split("/")
    stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1] else parts[-1]
    folders = parts[:-1]
    in_locales = any(f in LOCALE_DIRS for f in folders)
    pieces = [stem.rsplit(".", 1)[-1]]
    said = _LANG_PREFIX.sub("", pieces[0])
    if said != pieces[0] or ".lang" in stem:
        in_locales = True
        pieces.append(said)
    if not in_locales:
        return None
    for i, folder in enumerate(folders):  # a folder per locale right below a folder of locales
        if i and folders[i - 1] in LOCALE_DIRS:
            pieces.append(folder)
    for piece in pieces:
        found = _CODE.match(piece)
        if found and found.group(1) in CODES:
            language = found.group(1)
            region = found.group(3) or found.group(2) or ""
            return language, region, piece.replace("-", "_")
    return None


def named_languages(sig) -> tuple[dict[str, float], set[str]]:
    """(code -> 1.0 for each language the title names, the region codes it names). The title only: a report's
    body names languages in passing (`in plain English`, the locales a setting lists) far more often than it
    is about their translations."""
    title = sig.title_words
    named: dict[str, float] = {}
    for word in title:
        code = LANGUAGES.get(word)
        if code:
            named[code] = TITLE
    if not LOCALE_WORDS.isdisjoint(title):  # a title about locales: the codes it writes (`tr`, pt_BR, en-il)
        parts = {p for w in title if "_" in w or "-" in w for p in re.split(r"[-_]", w)}
        for word in title:
            found = _CODE.match(word)
            if found and found.group(1) in CODES and word not in COMMON_WORDS and (found.group(2) or word not in parts):
                named[word.replace("-", "_")] = TITLE
    regions = {COUNTRIES[w] for w in title if w in COUNTRIES}
    return named, regions


def collect(task) -> None:
    named, regions = named_languages(task.sig)
    if not named:
        return
    view = task.view
    for path, row in view.files.every().items():
        if row[1]:  # a test file
            continue
        code = locale_code(path)
        if code is None:
            continue
        language, region, full = code
        value = named.get(full, 0.0)
        if not value and language in named:
            value = named[language] * (1.0 if not region or region in regions else VARIANT)
        if value > 0:
            task.add(path, "locale", value, f"a translation file of the language the text names ({full})")
