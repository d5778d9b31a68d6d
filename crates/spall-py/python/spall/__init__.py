"""Profiling traces in Python, loaded in-process by spall's engine.

Reads .spall (v1, v3), Chrome JSON and Perfetto protobuf traces, gzipped or not::

    import spall
    t = spall.load("trace.json.gz")
    t.info()["spans"]
    t.stats(sort="total", top=10).to_pandas()
    t.query("SELECT name, SUM(dur) AS total FROM slice GROUP BY name").as_pandas_dataframe()
    t.slices()                       # a pyarrow.Table of every span
    spall.load_many(paths, jobs=4).query("SELECT COUNT(*) AS n FROM slice")

See docs/PYTHON.md in the repository.
"""

from ._spall import (
    QueryResult,
    SpallError,
    SqlError,
    Trace,
    TraceBatch,
    TraceError,
    __version__,
    load,
    load_many,
)

__all__ = [
    "QueryResult",
    "SpallError",
    "SqlError",
    "Trace",
    "TraceBatch",
    "TraceError",
    "__version__",
    "load",
    "load_many",
]
