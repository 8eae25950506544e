"""Commands of the ``prhub`` command line beyond ``digest``.

Each module has ``register(app)`` adding its command to the typer app of
:mod:`bot.cli`; :mod:`bot.commands.common` holds what the commands share.
"""
