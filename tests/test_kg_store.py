"""KG store and loaders: round trips against the source files, licenses, and atomic CSV loads."""

from __future__ import annotations

import csv
import gzip
import json

import pytest

from kb.kg_loaders import read_conceptnet, read_csv_triples, read_hetionet, read_medqa_ddb
from kb.kg_store import KGLoadError, KGStore, normalize_name
from tests.conftest import EVAL_DATA, KB_DATA

GOOD_CSV = "head,relation,tail\nlevodopa,treats,Parkinson's disease\nParkinson's disease,presents,tremor\n"


def test_normalize_name():
    assert normalize_name("  Parkinson's Disease ") == "parkinson disease"  # possessive dropped
    assert normalize_name("Sjögren-syndrome") == "sjogren syndrome"


def test_csv_round_trip(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(GOOD_CSV)
    store = KGStore(tmp_path / "kg.db")
    counts = store.replace_graph(read_csv_triples(path, name="mine"))
    assert counts["nodes"] == 3 and counts["edges"] == 2
    g = store.graph("mine")
    triples = {g.triple(e) for e in range(g.num_edges)}
    assert triples == {("levodopa", "treats", "Parkinson's disease"), ("Parkinson's disease", "presents", "tremor")}
    assert store.relations("mine")["treats"].template == "treats"
    assert store.alias_index("mine")["parkinson disease"] == [g.index["mine:Parkinson's disease"]]
    # undirected adjacency: the disease touches both other nodes
    pd = g.index["mine:Parkinson's disease"]
    assert sorted(g.names[i] for i in g.neighbors(pd)) == ["levodopa", "tremor"]
    # a second store on the same file sees the same graph
    assert KGStore(tmp_path / "kg.db").stats()[0]["edges"] == 2


@pytest.mark.parametrize("content, fragment", [
    ("head,relation\na,b\n", "missing: tail"),
    ("head,relation,tail\na,treats,b\nc,,d\n", "line 3"),
    ("head,relation,tail\na,treats,b\nc,treats\n", "line 3: expected 3 columns"),
    ("head,relation,tail\n", "no triples"),
])
def test_malformed_csv_loads_nothing(tmp_path, content, fragment):
    store = KGStore(tmp_path / "kg.db")
    good = tmp_path / "good.csv"
    good.write_text(GOOD_CSV)
    store.replace_graph(read_csv_triples(good, name="user"))
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    with pytest.raises(KGLoadError) as err:
        store.replace_graph(read_csv_triples(bad, name="user"))
    assert fragment in str(err.value)
    # the previous graph is intact and nothing of the bad file was written
    assert store.stats()[0]["edges"] == 2
    assert store.db.execute("SELECT count(*) FROM edges").fetchone()[0] == 2


def test_failed_write_rolls_back(tmp_path):
    """An error in the middle of the transaction leaves the old graph, not half of the new one."""
    store = KGStore(tmp_path / "kg.db")
    good = tmp_path / "good.csv"
    good.write_text(GOOD_CSV)
    store.replace_graph(read_csv_triples(good, name="user"))
    data = read_csv_triples(good, name="user")
    data.nodes.append(data.nodes[0])  # duplicate primary key: rejected before writing
    with pytest.raises(KGLoadError):
        store.replace_graph(data)
    data = read_csv_triples(good, name="user")
    data.edges.append(("levodopa", "unknown_rel", "tremor", "x"))
    with pytest.raises(KGLoadError):
        store.replace_graph(data)
    assert store.db.execute("SELECT count(*) FROM edges").fetchone()[0] == 2


def test_conceptnet_round_trip(tmp_path):
    data = read_conceptnet(KB_DATA)
    with gzip.open(KB_DATA / "conceptnet-cn100k" / "train100k.txt.gz", "rt") as fh:
        expected = {(p[1].strip(), p[0], p[2].strip()) for p in (line.rstrip("\n").split("\t") for line in fh)}
    got = {(h, r, t) for h, r, t, _ in data.edges}
    assert got == expected
    store = KGStore(tmp_path / "kg.db")
    store.replace_graph(data)
    g = store.graph("conceptnet")
    assert g.num_edges == len(expected)
    assert store.relations("conceptnet")["AtLocation"].template == "is at location of"


def test_medqa_ddb_round_trip():
    data = read_medqa_ddb(EVAL_DATA)
    relas = json.loads((EVAL_DATA / "medqa/kg_ddb/ddb_relas.json").read_text())
    assert len(data.edges) == len({tuple(v) for v in relas.values()})
    names = json.loads((EVAL_DATA / "medqa/kg_ddb/ddb_names.json").read_text())
    node_names = {local: name for local, name, _, _ in data.nodes}
    for name, (ptr, pref) in list(names.items())[:500]:
        if pref == "1":
            assert node_names[ptr] == name
    rel_names = {r.name: r.template for r in data.relations}
    assert rel_names["may_treat"] == "may treat"
    assert rel_names["is_a_risk_factor_of"] == "is a risk factor for"


def test_hetionet_skips_noncommercial_by_default():
    data = read_hetionet(KB_DATA)
    metas = {m for _, m, _, _ in data.edges}
    assert "CcSE" not in metas and data.skipped["noncommercial_CcSE"] > 0
    assert not any(kind == "Side Effect" for _, _, kind, _ in data.nodes)
    # every DpS edge of the sample is there exactly once (DpS is complete in edges-5k)
    with gzip.open(KB_DATA / "hetionet" / "edges-5k.sif.gz", "rt") as fh:
        dps = {(r["source"], r["target"]) for r in csv.DictReader(fh, delimiter="\t") if r["metaedge"] == "DpS"}
    assert {(h, t) for h, m, t, _ in data.edges if m == "DpS"} == dps
    names = {nid: name for nid, name, _, _ in data.nodes}
    assert ("Metformin", "CtD", "type 2 diabetes mellitus") in {(names[h], m, names[t]) for h, m, t, _ in data.edges}
    licenses = {lic for _, m, _, lic in data.edges if m == "DaG"}
    assert "ODbL 1.0" in licenses  # per-row DaG licenses


def test_hetionet_noncommercial_when_allowed():
    data = read_hetionet(KB_DATA, allow_noncommercial=True)
    cc = [lic for _, m, _, lic in data.edges if m == "CcSE"]
    assert cc and all("non-commercial" in lic for lic in cc)


def test_missing_mirror_is_a_clear_error(tmp_path):
    with pytest.raises(KGLoadError, match="does not exist"):
        read_conceptnet(tmp_path)
    with pytest.raises(KGLoadError, match="EVIDENTIA_EVAL_DATA_DIR"):
        read_medqa_ddb(None)
