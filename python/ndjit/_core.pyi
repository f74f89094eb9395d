from typing import Any, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

__version__: str
SIGNATURE_FILTER: str
# Every compile-error kind: (display name, whether Python reports it as a TypeError).
ERROR_KINDS: list[tuple[str, bool]]
# The name of every exception a failure maps to ("IndexError" ...).
EXCEPTIONS: list[str]

class CompiledFilter:
    def call(self, values: npt.NDArray[np.float64]) -> float: ...
    def interpret(self, values: npt.NDArray[np.float64]) -> float: ...
    def with_bindings(self, bindings: dict[str, Any]) -> CompiledFilter: ...
    def new_context(self, debug: bool = False) -> CallContext: ...
    @property
    def source(self) -> str: ...
    @property
    def ir(self) -> str: ...
    @property
    def clif(self) -> Optional[str]: ...
    @property
    def disasm(self) -> Optional[str]: ...
    @property
    def has_native_code(self) -> bool: ...
    @property
    def filter_size(self) -> Optional[int]: ...
    @property
    def bound_values(self) -> dict[str, Any]: ...

class CallContext:
    def capsules(self) -> Tuple[Any, Any]: ...
    def redirect(self, capsule: Any) -> None: ...
    def failure(self) -> Optional[BaseException]: ...
    def reset(self) -> None: ...
    @property
    def address(self) -> int: ...

def compile(
    source: str,
    bindings: Optional[dict[str, Any]] = None,
    imports: Optional[Sequence[Tuple[str, str]]] = None,
    filter_size: Optional[int] = None,
    inspect: bool = False,
    signature: str = "filter",
    native: bool = True,
) -> CompiledFilter: ...

# (pointer, typestr, shape, byte strides) from __cuda_array_interface__.
_DeviceArg = Tuple[int, str, Sequence[int], Sequence[int]]

def cuda_unavailable_reason() -> Optional[str]: ...
def cuda_device(ordinal: int = 0) -> Tuple[str, Tuple[int, int], int, str]: ...
def gpu_math_matches_cpu() -> bool: ...
def set_numpy_kernel(name: str, own: bool) -> None: ...
def numpy_kernel_is_own(name: str) -> bool: ...
def c_library_math(name: str, xs: list[float]) -> list[float]: ...
def cuda_ptx(
    compiled: CompiledFilter,
    footprint: npt.NDArray[np.bool_],
    mode: str,
    cval: float,
    origins: Sequence[int],
    input_dtype: str,
    output_dtype: str,
    sm: Optional[int] = None,
) -> str: ...
def cuda_filter_host(
    input: npt.NDArray[Any],
    output: npt.NDArray[Any],
    compiled: CompiledFilter,
    footprint: npt.NDArray[np.bool_],
    mode: str,
    cval: float,
    origins: Sequence[int],
) -> None: ...
def cuda_filter_device(
    input: _DeviceArg,
    output: _DeviceArg,
    compiled: CompiledFilter,
    footprint: npt.NDArray[np.bool_],
    mode: str,
    cval: float,
    origins: Sequence[int],
    stream: Optional[int] = None,
) -> None: ...
