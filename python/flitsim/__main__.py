"""``python -m flitsim``: the same command line as ``flitsim``."""

from .cli import main

if __name__ == "__main__":
    main(prog_name="flitsim")
