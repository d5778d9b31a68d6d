"""Type stubs for spall (the extension module spall._spall)."""

import os
from typing import Any, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union, overload

import pandas
import pyarrow

__version__: str

_Path = Union[str, "os.PathLike[str]"]
_Size = Union[int, str]
_Threads = Union[str, Sequence[str]]
_Range = Union[str, Tuple[Optional[int], Optional[int]]]

class SpallError(Exception):
    """Any failure of spall."""

class TraceError(SpallError):
    """A file that cannot be read as a trace."""

    path: Optional[str]
    """The file."""
    offset: int
    """Byte offset into the decoded input where the problem was found."""

class SqlError(SpallError):
    """A query SQLite refused, or that failed."""

    offset: Optional[int]
    """Byte offset in the SQL, when SQLite says."""

def load(
    path: _Path,
    *,
    max_memory: Optional[_Size] = None,
    max_decompressed: Optional[_Size] = None,
) -> Trace:
    """Loads a trace (.spall, Chrome JSON, Perfetto protobuf, or gzip of any of them).

    ``max_memory``: refuse a load estimated to need more (bytes, "4G", "auto", "off");
    ``max_decompressed``: stop gzip input expanding past it (default "16G"). Raises
    TraceError for a file that is not a readable trace. The GIL is released while loading.
    """

def load_many(
    paths: Sequence[_Path],
    *,
    jobs: Optional[int] = None,
    max_memory: Optional[_Size] = None,
    max_decompressed: Optional[_Size] = None,
) -> TraceBatch:
    """Loads several traces, ``jobs`` at a time (default: one per core)."""

class QueryResult:
    """A finished query."""

    @property
    def columns(self) -> List[str]:
        """The column names, in order."""
    def __len__(self) -> int: ...
    def as_arrow(self) -> pyarrow.Table:
        """The rows as a pyarrow.Table."""
    def as_pandas_dataframe(self) -> pandas.DataFrame:
        """The rows as a pandas.DataFrame."""
    def rows(self) -> List[Tuple[Any, ...]]:
        """The rows as tuples of int, float, str or None."""

class Trace:
    """A loaded trace (immutable)."""

    @property
    def path(self) -> str:
        """The path it was loaded from."""
    def info(self) -> Dict[str, Any]:
        """A summary with the keys of ``spall-cli info --format json``."""
    def stats(
        self,
        *,
        sort: Literal["self", "total", "count", "mean", "max", "name"] = "self",
        top: Optional[int] = None,
        filter: Optional[str] = None,
        thread: Optional[_Threads] = None,
        range: Optional[_Range] = None,
    ) -> pyarrow.Table:
        """Per-function statistics, as ``spall-cli stats``."""
    @overload
    def flame(
        self,
        *,
        format: Literal["json"],
        thread: Optional[_Threads] = None,
        range: Optional[_Range] = None,
        per_thread: bool = False,
        filter: Optional[str] = None,
        icicle: bool = False,
        title: str = "Flame graph",
    ) -> Dict[str, Any]: ...
    @overload
    def flame(
        self,
        *,
        format: Literal["folded", "svg"] = "folded",
        thread: Optional[_Threads] = None,
        range: Optional[_Range] = None,
        per_thread: bool = False,
        filter: Optional[str] = None,
        icicle: bool = False,
        title: str = "Flame graph",
    ) -> str:
        """Spans merged by call stack, as ``spall-cli flame``."""
    def diff(
        self,
        other: Trace,
        *,
        format: Literal["json", "csv", "folded", "svg"] = "json",
        metric: Literal["self", "total", "mean", "p50", "p90", "p99", "count"] = "self",
        by: Literal["name", "stack"] = "name",
        threshold: Optional[Union[float, str]] = None,
        min_delta: Optional[Union[int, float, str]] = None,
        alpha: float = 0.05,
        filter: Optional[str] = None,
        thread: Optional[_Threads] = None,
        match_threads: Literal["name", "id"] = "name",
        range: Optional[str] = None,
        title: str = "Differential flame graph",
        base_widths: bool = False,
    ) -> Any:
        """Compares this trace (BASE) with ``other`` (NEW), as ``spall-cli diff``: a dict
        for json, else str."""
    def query(self, sql: str) -> QueryResult:
        """SQL over the trace with Perfetto's table names, as ``spall-cli query``."""
    def table(self, name: str) -> pyarrow.Table:
        """SQL table ``name`` (slice, thread, process, track, thread_track, process_track,
        counter_track, counter, instant, flow, args) with the ids ``query`` sees."""
    def slices(self) -> pyarrow.Table:
        """Every span of the model: ts, dur, name, category, depth, thread
        (a row of threads()), flags."""
    def threads(self) -> pyarrow.Table:
        """Every thread: thread (its row), process, pid, tid, name, process_name, spans,
        max_depth."""
    def counters(self) -> pyarrow.Table:
        """Every counter sample: series, name, key, process, thread, ts, value."""
    def instants(self) -> pyarrow.Table:
        """Every instant event: ts, name, category, scope, process, thread."""
    def flows(self) -> pyarrow.Table:
        """Every arrow between spans: flow, flow_id, name, category, slice_out and slice_in
        (rows of slices()), ts_out, ts_in."""
    def samples(self) -> pyarrow.Table:
        """Every sample: ts, weight, unit, kind, timed, thread and process (rows of
        threads()), cpu (null where the format does not say), name, file, line (the leaf function's), depth, frame, stack (outermost
        to leaf, ';'-separated)."""

class TraceBatch:
    """Several loaded traces."""

    @property
    def traces(self) -> List[Trace]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Trace: ...
    def __iter__(self) -> Iterator[Trace]: ...
    def query(self, sql: str) -> QueryResult:
        """Runs ``sql`` on every trace: one result with a first column ``trace``."""
