"""One extractor per language behind one interface (see base.py); each module holds its language's facts as data."""

from .base import Language, Symbol, extract_with, language_for, language_named, languages, parse_manifest

__all__ = ["Language", "Symbol", "extract_with", "language_for", "language_named", "languages", "parse_manifest"]
