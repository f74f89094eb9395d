"""``python -m ndjit filter in.zarr out.zarr -e EXPR --size 5``: Zarr in, Zarr out, out of core.

The native ``ndjit`` command (crate ``ndjit-cli``, ``cli/``) reads images and ``.npy`` files whole; reading Zarr in
Rust would need a heavy crate and its own chunk scheduling. Dask already streams Zarr chunk by
chunk, so the Zarr command lives here, on :func:`ndjit.dask.filter_zarr`, with the native
command's option names and exit statuses (2 bad arguments or expression, 3 unreadable or
unwritable store, 4 the filter failed) and a progress bar from ``dask.diagnostics``.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
from typing import List, Optional

import numpy as np

EXIT_USAGE, EXIT_IO, EXIT_FILTER = 2, 3, 4


def _ints(text: Optional[str], option: str):
    """``"3"`` → 3, ``"3,5"`` → [3, 5] (one number for every axis, or one per axis)."""
    if text is None:
        return None
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"{option} takes integers separated by commas, not {text!r}") from None
    return values[0] if len(values) == 1 else values


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"needs at least 1 thread, not {n}")
    return n


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ndjit", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("filter", help="scipy.ndimage.generic_filter from a Zarr array to a new Zarr array")
    p.add_argument("input", help="input Zarr array (a path or URL)")
    p.add_argument("output", help="output Zarr array (created, with the input's chunks)")
    p.add_argument("-e", "--expr", required=True, metavar="PYTHON",
                   help="the filter: an expression over the neighbourhood x (np.median(x)), a lambda or a def")
    p.add_argument("-s", "--size", metavar="N[,N...]", help="footprint box size: one for every axis, or one per axis")
    p.add_argument("-f", "--footprint", metavar="FILE.npy", help="footprint from a .npy file (non-zero entries)")
    p.add_argument("-m", "--mode", default="reflect", help="boundary mode (scipy's names)")
    p.add_argument("--cval", type=float, default=0.0, help="the value outside the input for the constant modes")
    p.add_argument("--origin", metavar="N[,N...]", default="0", help="shift of the footprint")
    p.add_argument("--axes", metavar="A[,A...]", help="axes to filter (default: all)")
    p.add_argument("--dtype", help="output element type (default: the input's)")
    p.add_argument("-j", "--threads", type=_positive, help="threads of Dask's local scheduler (default: all cores)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output array")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    return parser


def _fail(code: int, message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def _filter(args) -> int:
    """Each step's failures get their own exit status: the store (3), the arguments and
    expression (2), the filter at run time (4)."""
    import dask
    import dask.array as da
    from dask.diagnostics import ProgressBar

    from ._errors import FilterError
    from .dask import Staging, check_target, generic_filter

    try:
        check_target(args.input, args.output)
    except ValueError as e:
        return _fail(EXIT_USAGE, str(e))
    except FileExistsError as e:
        return _fail(EXIT_IO, str(e))
    try:
        footprint = None if args.footprint is None else np.load(args.footprint) != 0
        source = da.from_zarr(args.input)
    except Exception as e:  # a missing or unreadable store or footprint file, whatever its type
        return _fail(EXIT_IO, f"{type(e).__name__}: {e}")
    try:
        axes = _ints(args.axes, "--axes")
        result = generic_filter(source, args.expr, size=_ints(args.size, "--size"), footprint=footprint,
                                output=args.dtype, mode=args.mode, cval=args.cval, origin=_ints(args.origin, "--origin"),
                                axes=[axes] if isinstance(axes, int) else axes)
    except Exception as e:  # scipy's argument errors and ndjit's compile errors, with their location
        return _fail(EXIT_USAGE, str(e))
    try:
        # A local output is written beside its place and moved there once complete: a failure
        # leaves no half-written store and the array an --overwrite would replace intact.
        staging = Staging(args.output, args.overwrite)
        job = result.to_zarr(staging.path, overwrite=staging.overwrite, compute=False)
    except Exception as e:  # an existing output without --overwrite, an unwritable place
        return _fail(EXIT_IO, f"{type(e).__name__}: {e}")
    try:
        with dask.config.set(scheduler="threads", num_workers=args.threads):
            with ProgressBar(minimum=1.0) if not args.quiet else contextlib.nullcontext():
                job.compute()
        staging.commit()
    except Exception as e:
        staging.discard()
        if isinstance(e, FilterError):  # the filter's own exception (Python's, as ndjit raises it)
            return _fail(EXIT_FILTER, f"the filter failed: {type(e).__name__}: {e}")
        return _fail(EXIT_IO, f"{type(e).__name__}: {e}")  # reading or writing a store (a corrupt chunk)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        import dask.array  # noqa: F401
        import zarr  # noqa: F401
    except ImportError as e:
        from .dask import _EXTRA_HINT
        return _fail(EXIT_USAGE, f"{_EXTRA_HINT} ({e})")
    return _filter(args)


if __name__ == "__main__":
    sys.exit(main())
