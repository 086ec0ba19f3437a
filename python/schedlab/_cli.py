"""The ``schedlab`` console script that ``pip install .`` puts on PATH: the Rust command
line itself (``schedlab._native.cli_main``, from the same build as the module), so the
package is the whole tool without a separate cargo build.
"""

from __future__ import annotations

import os
import signal
import sys


def main() -> None:
    """Run ``schedlab`` with this process's arguments and exit with its status."""
    # `schedlab sweep` starts `python3 -m schedlab sweep`: make it this interpreter, the
    # one this package is installed in (not whatever python3 is first on PATH).
    os.environ.setdefault("SCHEDLAB_PYTHON", sys.executable)
    # Ctrl-C ends the command as it ends the binary: Python's own handler would only set
    # a flag nobody reads while Rust runs. Commands that catch SIGINT (real runs, sweeps'
    # children) install their own handlers, as in the binary.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from . import _native

    sys.exit(_native.cli_main([sys.argv[0], *sys.argv[1:]]))


if __name__ == "__main__":
    main()
