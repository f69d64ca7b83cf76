"""`python -m compendium.cli`: the `compendium` command."""

from . import main

if __name__ == "__main__":
    raise SystemExit(main())
