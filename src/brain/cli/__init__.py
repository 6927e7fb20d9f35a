"""The `brain` command line: a thin layer over the library.

Each command group lives in its own module with a ``register(subparsers)`` function;
handlers parse input, make one library call and format the result. Errors from the
library become exit codes here and only here.
"""

from .main import main

__all__ = ["main"]
