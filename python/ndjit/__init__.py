"""ndjit: compile scipy.ndimage filter callbacks to native code.

    >>> import numpy as np, scipy.ndimage as ndi, ndjit
    >>> f = ndjit.jit_filter(lambda x: x.max() - x.min())
    >>> ndi.generic_filter(np.arange(9.0).reshape(3, 3), f, size=3)[1, 1]
    8.0
"""
from . import _core
from . import _blas
from . import _numpy_kernels
from . import _cuda as cuda
from ._errors import *  # noqa: F401,F403
from ._errors import __all__ as _error_names
from ._dispatch import generic_filter
from ._driver import generic_filter1d
from ._filter import Filter, jit_filter, jit_filter1d, jit_integrand, jit_transform

_numpy_kernels.tell_core()  # before anything is compiled
_blas.tell_core()
__version__ = _core.__version__
__all__ = ["Filter", "generic_filter", "generic_filter1d", "jit_filter", "jit_filter1d", "jit_transform", "jit_integrand", "cuda", "__version__"] + list(_error_names)


def __getattr__(name: str):
    # ``ndjit.dask`` is loaded on first use: importing ndjit never imports Dask.
    if name == "dask":
        import importlib
        return importlib.import_module(".dask", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
