"""The model as pyarrow tables: every span, thread, counter sample, instant, arrow and
sample."""

import re

import pyarrow as pa
import pyarrow.compute as pc

import spall


def test_slices_hold_every_span_with_the_stats_numbers(fixtures, load):
    t = load(fixtures / "real/pytorch_kineto_trace_diff_test.json.gz")
    s = t.slices()
    assert isinstance(s, pa.Table)
    assert s.num_rows == t.info()["spans"]
    assert s.column_names == ["ts", "dur", "name", "category", "depth", "thread", "flags"]
    # Per name, count and total as stats counts them (stats clips nothing without range).
    by_name = s.group_by("name").aggregate([("dur", "sum"), ("dur", "count")])
    mine = {r["name"]: (r["dur_count"], r["dur_sum"]) for r in by_name.to_pylist()}
    stats = {r["name"]: (r["count"], r["total_ns"]) for r in t.stats().to_pylist()}
    assert mine == stats
    # Names come dictionary-encoded: pandas sees a categorical of the names used.
    df = s.to_pandas()
    assert str(df["name"].dtype) == "category"
    assert set(df["name"].cat.categories) == set(stats)


def test_threads_counters_instants_and_flows_match_info(fixtures, load):
    t = load(fixtures / "real/catapult_flow.json")
    info = t.info()
    threads = t.threads()
    assert threads.num_rows == info["threads"]
    assert sum(threads["spans"].to_pylist()) == info["spans"]
    assert t.instants().num_rows == info["instants"]
    flows = t.flows()
    assert flows.num_rows == info["flow_links"] > 0
    # Each arrow joins two spans of slices(): its ends' starts are theirs.
    s = t.slices()
    ts = s["ts"].to_pylist()
    for r in flows.to_pylist():
        assert ts[r["slice_out"]] == r["ts_out"] and ts[r["slice_in"]] == r["ts_in"]
    c = load(fixtures / "real/bazel_profile_with_queuing.json.gz")
    counters = c.counters()
    assert counters.num_rows == c.info()["counter_samples"] > 0
    assert pc.min(counters["ts"]).as_py() >= c.info()["start_ns"]


def test_load_many_queries_every_trace_into_one_frame(fixtures):
    paths = [
        str(fixtures / "real/catapult_flow.json"),
        str(fixtures / "real/catapult_big_trace.json"),
        str(fixtures / "spall/odingengine_v3.spall"),
    ]
    batch = spall.load_many(paths, jobs=2)
    assert len(batch) == 3 and batch[-1].path == paths[-1]
    df = batch.query("SELECT COUNT(*) AS n, MIN(ts) AS first FROM slice").as_pandas_dataframe()
    assert list(df.columns) == ["trace", "n", "first"]
    assert df["trace"].tolist() == paths
    for trace, n in zip(batch, df["n"]):
        assert trace.query("SELECT COUNT(*) FROM slice").rows()[0][0] == n


def test_query_types_and_errors(fixtures, load):
    t = load(fixtures / "real/catapult_flow.json")
    r = t.query("SELECT 1 AS i, 2.5 AS f, 'x' AS s, NULL AS n")
    assert r.rows() == [(1, 2.5, "x", None)]
    schema = r.as_arrow().schema
    assert [str(schema.field(c).type) for c in ["i", "f", "s"]] == ["int64", "double", "string"]
    try:
        t.query("SELECT nme FROM slice")
    except spall.SqlError as e:
        assert "no such column: nme" in str(e)
    else:
        raise AssertionError("a bad query raised nothing")


def test_samples_weigh_each_stack_as_the_folded_flame_graph(fixtures, load):
    for name in ["spin_fields.perf", "work.cpuprofile"]:
        t = load(fixtures / "real/profiles" / name)
        s = t.samples()
        assert s.column_names == [
            "ts", "weight", "unit", "kind", "timed", "thread", "process", "cpu",
            "name", "file", "line", "depth", "frame", "stack",
        ]
        # Each stack's summed weight is its line of `flame --format folded`.
        by_stack = s.group_by("stack").aggregate([("weight", "sum")])
        mine = {r["stack"]: r["weight_sum"] for r in by_stack.to_pylist()}
        folded = {}
        for line in t.flame(format="folded").splitlines():
            stack, w = line.rsplit(" ", 1)
            folded[stack] = folded.get(stack, 0) + int(w)
        assert mine == folded, name
        # The leaf is the stack's last frame, and depth its frame count.
        for r in s.slice(0, 50).to_pylist():
            frames = r["stack"].split(";")
            assert (r["name"], r["depth"]) == (frames[-1], len(frames))
        assert pc.all(s["timed"]).as_py()
    # SQL's sample table has the same samples, on the same threads.
    t = load(fixtures / "real/profiles/spin_fields.perf")
    assert t.query("SELECT COUNT(*) FROM perf_sample").rows() == [(t.samples().num_rows,)]
    per_thread = t.samples().group_by("thread").aggregate([("weight", "count")])
    assert sorted(r["weight_count"] for r in per_thread.to_pylist()) == [17, 157]


def test_samples_carry_the_cpu_perf_script_printed(fixtures, load):
    # deep_cpu.perf: `perf record -a -g`, its headers `comm tid [cpu] secs: period event:`,
    # read here independently of the package's reader.
    path = fixtures / "real/profiles/deep_cpu.perf"
    header = re.compile(r"^\S.*?\s(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):", re.M)
    want = sorted(
        (int(secs) * 1_000_000_000 + int(frac.ljust(9, "0")), int(cpu))
        for _, cpu, secs, frac in header.findall(path.read_text())
    )
    assert len({c for _, c in want}) > 1
    t = load(path)
    s = t.samples()
    assert sorted(zip(s["ts"].to_pylist(), s["cpu"].to_pylist())) == want
    # The SQL table's column says the same.
    assert t.query("SELECT SUM(cpu), COUNT(cpu) FROM perf_sample").rows() == [
        (sum(c for _, c in want), len(want))
    ]
    # A format with no CPUs has nulls.
    assert load(fixtures / "real/profiles/work.cpuprofile").samples()["cpu"].null_count > 0
