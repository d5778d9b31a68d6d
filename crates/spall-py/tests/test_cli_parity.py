"""The package's answers are spall-cli's, on real traces from the repository's fixtures."""

import json

import pytest

import spall

TRACES = [
    "real/pytorch_kineto_trace_diff_test.json.gz",
    "real/catapult_flow.json",
    "real/bazel_profile_with_queuing.json.gz",
    "real/chromium148_startup.pftrace.gz",
    "spall/odingengine_v3.spall",
    "spall/crux_v1.spall",
    "edge/out-of-order.json",
]

# Times the load took: the only keys that differ from run to run.
TIMINGS = {"load_ms", "index_ms"}


@pytest.mark.parametrize("name", TRACES)
def test_info_is_the_cli_json(cli, fixtures, name, load):
    path = str(fixtures / name)
    want = json.loads(cli("info", path, "--format", "json").stdout)
    got = load(path).info()
    assert set(got) == set(want)
    assert {k: v for k, v in got.items() if k not in TIMINGS} == {
        k: v for k, v in want.items() if k not in TIMINGS
    }
    assert want["spans"] > 0


@pytest.mark.parametrize("name", TRACES)
def test_stats_are_the_cli_json(cli, fixtures, name, load):
    path = str(fixtures / name)
    want = json.loads(cli("stats", path, "--format", "json", "--sort", "total").stdout)
    got = load(path).stats(sort="total").to_pylist()
    assert got == want["functions"]


def test_stats_options_are_the_cli_options(cli, fixtures, load):
    path = str(fixtures / "real/pytorch_kineto_trace_diff_test.json.gz")
    t = load(path)
    want = json.loads(
        cli(
            "stats", path, "--format", "json", "--sort", "count", "--top", "5",
            "--filter", "^cuda", "--range", "100ms..900ms",
        ).stdout
    )["functions"]
    got = t.stats(sort="count", top=5, filter="^cuda", range="100ms..900ms").to_pylist()
    assert got == want and len(got) == 5
    # A thread by name, as the CLI takes it.
    thread = t.threads().to_pylist()[3]["name"]
    want = json.loads(cli("stats", path, "--format", "json", "--thread", thread).stdout)
    assert t.stats(thread=thread).to_pylist() == want["functions"]
    with pytest.raises(ValueError, match="no such thread"):
        t.stats(thread="no thread has this name")
    with pytest.raises(ValueError, match="sort"):
        t.stats(sort="fastest")


@pytest.mark.parametrize("name", TRACES[:3])
def test_flame_is_the_cli_output(cli, fixtures, name, load):
    path = str(fixtures / name)
    t = load(path)
    assert t.flame() == cli("flame", path).stdout
    assert t.flame(per_thread=True) == cli("flame", path, "--per-thread").stdout
    tree = t.flame(format="json")
    assert tree == json.loads(cli("flame", path, "--format", "json").stdout)
    assert tree["total_ns"] > 0


def test_diff_is_the_cli_json(cli, fixtures, load):
    base = str(fixtures / "real/catapult_flow.json")
    new = str(fixtures / "real/catapult_big_trace.json")
    got = load(base).diff(load(new), metric="total", threshold="10%")
    want = json.loads(
        cli("diff", base, new, "--format", "json", "--metric", "total", "--threshold", "10%").stdout
    )
    assert got == want
    assert want["summary"]["added"] > 0
    folded = load(base).diff(load(new), by="stack", format="folded")
    assert folded == cli("diff", base, new, "--by", "stack", "--format", "folded").stdout
    with pytest.raises(ValueError, match="--by stack"):
        load(base).diff(load(new), format="folded")


@pytest.mark.parametrize("name", TRACES[:4])
def test_query_rows_are_the_cli_rows(cli, fixtures, name, load):
    path = str(fixtures / name)
    sql = (
        "SELECT name, COUNT(*) AS n, SUM(dur) AS total, AVG(dur) AS mean FROM slice "
        "GROUP BY name ORDER BY total DESC, name LIMIT 20"
    )
    want = json.loads(cli("query", path, sql, "--format", "json").stdout)
    r = load(path).query(sql)
    assert r.columns == want["columns"]
    assert [list(row) for row in r.rows()] == want["rows"]
    df = r.as_pandas_dataframe()
    assert list(df.columns) == want["columns"]
    assert df["n"].tolist() == [row[1] for row in want["rows"]]
    assert r.as_arrow().num_rows == len(want["rows"]) > 0


def test_sql_tables_are_the_query_tables(fixtures, load):
    t = load(fixtures / "real/catapult_flow.json")
    for name in ["slice", "thread", "flow", "counter", "args"]:
        table = t.table(name)
        n = t.query(f"SELECT COUNT(*) FROM {name}").rows()[0][0]
        assert table.num_rows == n, name
    ids = t.query("SELECT id, name FROM slice ORDER BY id").rows()
    got = t.table("slice").sort_by("id").select(["id", "name"]).to_pylist()
    assert [(r["id"], r["name"]) for r in got] == ids
    with pytest.raises(ValueError, match="no table"):
        t.table("sched")
