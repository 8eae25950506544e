"""Tests of the renderers in ``bot.cards`` (a package, so its conftest does not shadow ``tests/conftest.py``)."""
