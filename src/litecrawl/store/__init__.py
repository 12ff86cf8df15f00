"""Persistence: the store interfaces by role, the pieces both backends share, one package per
database (``sqlite/``, ``postgres/``) and :mod:`.backends`, which opens the one a location names.

This package imports nothing that uses it (``tests/test_store_layering.py`` checks), and this
module imports nothing at all: modules below it (``strategy.base`` reads page states here)
import from it freely.
"""
