"""The one error path of the ``flitsim`` command line.

Every command group of the CLI (``flitsim``, ``flitsim topo``, ``flitsim qos``) is a
:class:`Group`, so every command runs inside :meth:`Group.invoke`, which turns

* a :class:`flitsim.FlitsimError` (bad configuration, override, topology, …; its message
  names the file, key and line when they are known), an :class:`OSError` (a missing or
  unwritable file) and an :class:`ImportError` (an optional dependency such as matplotlib)
  into ``error: <message>`` on stderr and exit status 2, without a traceback;
* Ctrl-C (:class:`KeyboardInterrupt`) into ``interrupted`` (with the sweep's progress and how
  to resume it, for ``flitsim sweep``) on stderr and exit status 130;

and :meth:`Group.main` prints click's own usage errors (unknown option, bad ``--engine``
choice, missing argument) the same way, ``error: <message>`` and a hint, with status 2.

Commands signal a user error with :func:`fail` (or by letting a ``FlitsimError`` through).
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn, Optional

import click

from ._core import FlitsimError

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# ctx.meta key: what to add to "interrupted" when a command is stopped by Ctrl-C.
INTERRUPT_HINT = "flitsim.interrupt_hint"


def fail(message: str) -> NoReturn:
    """Stop the command with ``error: <message>`` and exit status 2."""
    raise FlitsimError(message)


def error_message(e: BaseException) -> str:
    """The text after ``error: `` for an exception the CLI reports."""
    if isinstance(e, OSError) and e.filename:
        return f"{e.strerror or e}: {e.filename}"
    return str(e)


def _exit_error(message: str, code: int = EXIT_USAGE) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _exit_interrupted(e: BaseException, ctx: Optional[click.Context]) -> NoReturn:
    finished, total = getattr(e, "finished", None), getattr(e, "total", None)
    hint = ctx.meta.get(INTERRUPT_HINT) if ctx is not None else None
    detail = f"{finished} of {total} points finished; " if total is not None else ""
    if hint:
        detail += hint
    click.echo(f"interrupted: {detail}" if detail else "interrupted", err=True)
    sys.exit(EXIT_INTERRUPTED)


class Group(click.Group):
    """A click group whose commands all report errors through one path (module docstring)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # output piped into `head`: click leaves quietly
        except (FlitsimError, OSError, ImportError) as e:
            _exit_error(error_message(e))
        except KeyboardInterrupt as e:
            _exit_interrupted(e, ctx)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.Abort:  # Ctrl-C outside a command (e.g. while parsing)
            _exit_interrupted(KeyboardInterrupt(), None)
        except click.ClickException as e:
            hint = ""
            if isinstance(e, click.UsageError) and e.ctx is not None:
                help_option = (e.ctx.help_option_names or ["--help"])[0]
                hint = f"\nTry '{e.ctx.command_path} {help_option}' for help."
            code = EXIT_USAGE if isinstance(e, click.UsageError) else e.exit_code
            _exit_error(e.format_message() + hint, code)
        # Without standalone mode click returns the exit code of --help/--version.
        sys.exit(rv if isinstance(rv, int) else 0)
