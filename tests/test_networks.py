"""The network catalogue: configs, readers per format, offline loading, feature rules.

Expected counts are MANIFEST.md's (§5, §9: computed there with networkx), or derived from
the files by networkx / plain Python where the cleaning rule changes them.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import urllib.error
import zipfile
from collections import Counter
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import torch
from omegaconf import OmegaConf
from torch_geometric.data import Data

from graphnetz.config_dir import CONF_DIR
from graphnetz.data.feature_rules import (
    FEATURE_RULES,
    ONE_HOT_LIMIT,
    node_features,
    with_feature_rule,
)
from graphnetz.data.mirror import DatasetUnavailableError
from graphnetz.data.networks import NETWORKS, NetworkFormatError, load_network, network_entry
from graphnetz.data.networks import download as netz_download
from graphnetz.data.networks.graph import simple_undirected
from graphnetz.data.networks.graphml import (
    iter_topology_zoo,
    parse_number,
    read_graphml,
    topology_zoo_names,
)
from graphnetz.data.networks.other_formats import read_matrix_market, read_product_space
from graphnetz.data.networks.text_formats import (
    read_contacts,
    read_counted_edge_list,
    read_edge_list,
    read_multiplex,
    read_network_repository,
    read_pajek,
)
from graphnetz.tasks.link_tasks import LinkPredictionTask
from graphnetz.training.resolve import resolve_run

REPO = Path(__file__).resolve().parents[1]
CATEGORIES = {
    "biology",
    "social",
    "infrastructure",
    "finance",
    "computing",
    "security",
    "knowledge",
}
LABELLED = ("hospital_contacts", "high_school_contacts")  # real node classes in the mirror
DOWNLOAD_ONLY = (
    "us_patents",
    "as_skitter",
    "wordnet_network",
    "budapest_connectome",
    "facebook_friends",
)

# (entry, network): nodes and edges as MANIFEST's networkx reading counts them; all of
# these are simple undirected graphs without self-loops, so the cleaning keeps them.
MANIFEST_SIMPLE = {
    ("euroroad", "euroroad"): (1174, 1417),
    ("board_directors", "net1m_2011-08-01"): (1421, 3855),
    ("internet_as", "internet_as"): (22963, 48436),
    ("power_grid", "power"): (4941, 6594),
    ("terrorists_911", "terrorists_911"): (69, 159),
    ("train_terrorists", "train_terrorists"): (64, 243),
    ("dnc_emails", "dnc"): (849, 10384),
    ("hospital_contacts", "sp_hospital"): (75, 1139),
    ("high_school_contacts", "proximity"): (327, 5818),
    ("high_school_contacts", "thiers12"): (180, 2220),
    ("eu_airlines", "eu_airlines"): (417, 2953),
    ("london_transport", "london_transport"): (369, 430),
    ("karate_network", "78"): (34, 78),
    ("product_space", "SITC"): (774, 1779),
    ("product_space", "HS"): (866, 2532),
    ("us_roads", "usroads"): (129164, 165435),
    ("us_roads", "usroads-48"): (126146, 161950),
    ("us_roads", "minnesota"): (2642, 3303),
    ("urban_streets", "brasilia"): (179, 230),
}


def yaml_names() -> list[str]:
    return sorted(NETWORKS)


@pytest.fixture
def no_download(monkeypatch):
    """Any download attempt fails the test (offline loading must not try one)."""

    def refuse(url, dest):
        raise AssertionError(f"tried to download {url}")

    monkeypatch.setattr(netz_download, "fetch_url", refuse)


@pytest.fixture
def offline(monkeypatch):
    """Downloads fail the way they do without network access."""

    def unreachable(url, dest):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(netz_download, "fetch_url", unreachable)


def count(data: Data) -> tuple[int, int]:
    return int(data.num_nodes), int(data.edge_index.size(1)) // 2


def assert_simple_undirected(data: Data) -> None:
    src, dst = data.edge_index
    assert bool((src != dst).all())  # no self-loops
    pairs = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert len(pairs) == data.edge_index.size(1)  # no duplicates
    assert all((v, u) in pairs for u, v in pairs)  # both directions


# --- configs -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", yaml_names())
def test_every_network_yaml_composes_as_a_link_prediction_dataset(make_cfg, name):
    cfg = make_cfg(f"dataset={name}")
    assert cfg.dataset.name == name and cfg.task.type == "link_pred"
    assert cfg.dataset.category in CATEGORIES
    expected = ["link_pred", "node_cls"] if name in LABELLED else ["link_pred"]
    assert list(cfg.dataset.task_types) == expected
    assert cfg.dataset.features in FEATURE_RULES
    assert cfg.dataset.loader._target_ == "graphnetz.data.networks.load_network"
    assert cfg.dataset.loader.network == network_entry(name).default_network
    spec = resolve_run(cfg)  # epochs and task type check out
    assert spec.max_epochs == cfg.dataset.epochs.link_pred


def test_the_catalogue_epochs_follow_the_reference():
    epochs = {
        name: OmegaConf.load(CONF_DIR / "dataset" / f"{name}.yaml").epochs.link_pred
        for name in yaml_names()
    }
    assert epochs["terrorists_911"] == 120
    assert {epochs["euroroad"], epochs["power_grid"], epochs["product_space"]} == {80}
    assert epochs["board_directors"] == epochs["internet_as"] == 40
    assert all(40 <= e <= 80 for n, e in epochs.items() if n != "terrorists_911")


def test_an_unknown_network_dataset_lists_the_valid_ones(tmp_path):
    with pytest.raises(ValueError, match=r"unknown network dataset 'euroraod'.*'euroroad'"):
        load_network(tmp_path, name="euroraod")


# --- offline loading and counts ----------------------------------------------------------


@pytest.mark.parametrize(("name", "network"), sorted(MANIFEST_SIMPLE))
def test_mirror_networks_load_offline_with_manifest_counts(
    mirror, tmp_path, no_download, name, network
):
    data = load_network(tmp_path, mirror, name=name, network=network)
    assert count(data) == MANIFEST_SIMPLE[(name, network)]
    assert data.source.startswith(str(mirror / "networks"))
    assert getattr(data, "x", None) is None
    assert_simple_undirected(data)


def test_route_views_loses_exactly_its_self_loops(mirror, tmp_path, no_download):
    # MANIFEST: 6474 nodes, 13895 edges including 1323 self-loops
    data = load_network(tmp_path, mirror, name="route_views")
    assert count(data) == (6474, 13895 - 1323)


def test_high_school_2011_loses_its_one_self_loop(mirror, tmp_path, no_download):
    path = mirror / "networks/sp_high_school/thiers11/tij_thiers11.dat"
    loops = {
        line.split()[1]
        for line in path.read_text().splitlines()
        if line.split()[1] == line.split()[2]
    }
    data = load_network(tmp_path, mirror, name="high_school_contacts", network="thiers11")
    assert count(data) == (126, 1712 - len(loops)) and len(loops) == 1


def test_contact_networks_carry_the_metadata_classes(mirror, tmp_path, no_download):
    rows = (mirror / "networks/sp_hospital/metadata_hospital.dat").read_text().split("\n")
    statuses = Counter(line.split()[2] for line in rows if line.strip())
    assert statuses == {"ADM": 8, "MED": 11, "NUR": 27, "PAT": 29}
    data = load_network(tmp_path, mirror, name="hospital_contacts")
    # classes are numbered in sorted name order: ADM, MED, NUR, PAT
    assert torch.bincount(data.y).tolist() == [statuses[k] for k in sorted(statuses)]
    school = load_network(tmp_path, mirror, name="high_school_contacts")
    assert school.y.size(0) == 327 and int(school.y.max()) + 1 == 9  # thiers13: 9 classes


def test_a_contact_node_without_a_class_is_an_error(tmp_path, monkeypatch):
    monkeypatch.delenv("GRAPHNETZ_DATA_MIRROR", raising=False)  # read the data dir's copy
    folder = tmp_path / "networks/sp_hospital"
    folder.mkdir(parents=True)
    (folder / "tij_hospital.dat").write_text("20\t1\t2\n40\t2\t3\n")
    (folder / "metadata_hospital.dat").write_text("0\t1\tNUR\n1\t2\tPAT\n")
    with pytest.raises(
        NetworkFormatError, match=r"metadata_hospital.dat.*no class for node\(s\) \[3\]"
    ):
        load_network(tmp_path, None, name="hospital_contacts")


def test_node_classification_on_a_contact_network_builds_features_on_the_whole_graph(
    make_cfg, mirror
):
    from graphnetz.training.pipeline import build_run

    cfg = make_cfg("dataset=hospital_contacts", "task=node_cls", mirror=mirror)
    built = build_run(resolve_run(cfg))
    assert (built.data.in_channels, built.data.out_channels) == (75, 4)  # one-hot ids, 4 classes
    assert built.data.info["features"].startswith("reference: one-hot node ids (N = 75")


def _networkx_graphtool(path: Path) -> nx.Graph:
    """MANIFEST's workaround: declare graph-tool's attribute types strings, then read."""
    text = gzip.open(path, "rt").read()
    text = text.replace('"vector_float"', '"string"').replace(
        'attr.type="float"', 'attr.type="string"'
    )
    return nx.read_graphml(io.StringIO(text))


def test_celegans_becomes_the_simple_graph_networkx_sees(mirror, tmp_path, no_download):
    reference = _networkx_graphtool(mirror / "networks/celegansneural/celegansneural.xml.gz")
    assert reference.number_of_edges() == 2359 and reference.is_directed()  # MANIFEST
    simple = nx.Graph(reference.to_undirected())
    simple.remove_edges_from(nx.selfloop_edges(simple))
    data = load_network(tmp_path, mirror, name="celegans")
    assert count(data) == (297, simple.number_of_edges())


def test_internet_topology_merges_parallel_links_like_networkx(mirror, tmp_path, no_download):
    with tarfile.open(mirror / "networks/topology_zoo/graphml.tar.gz") as tar:
        reference = nx.read_graphml(io.BytesIO(tar.extractfile("graphml/Kdl.graphml").read()))
    assert (reference.number_of_nodes(), reference.number_of_edges()) == (754, 899)  # MANIFEST
    simple = nx.Graph(reference)
    simple.remove_edges_from(nx.selfloop_edges(simple))
    data = load_network(tmp_path, mirror, name="internet_topology")
    assert count(data) == (754, simple.number_of_edges())
    abilene = load_network(tmp_path, mirror, name="internet_topology", network="Abilene")
    assert count(abilene) == (11, 14)  # MANIFEST


def test_a_network_outside_the_mirror_names_those_it_holds(mirror, tmp_path, offline):
    with pytest.raises(DatasetUnavailableError, match=r"it holds networks \['HS', 'SITC'\]"):
        load_network(tmp_path, mirror, name="product_space", network="sitc")


def test_an_unknown_topology_zoo_network_lists_valid_names(mirror, tmp_path):
    with pytest.raises(ValueError, match=r"unknown Topology Zoo network 'Nowhere'.*276"):
        load_network(tmp_path, mirror, name="internet_topology", network="Nowhere")


# --- readers, format by format -----------------------------------------------------------


def test_graphml_reader_decodes_graph_tool_hex_floats_and_vectors(mirror):
    raw = read_graphml(mirror / "networks/power/power.xml.gz")
    # the first node's pos in the file: -0x1.51966d9fc6bfcp+5, -0x1.777b284de85aep+6
    assert raw.node_attrs["pos"][0] == [
        float.fromhex("-0x1.51966d9fc6bfcp+5"),
        float.fromhex("-0x1.777b284de85aep+6"),
    ]
    assert parse_number("0x1.8p+1") == 3.0 and parse_number("-0x1p-2") == -0.25
    assert parse_number("2.5") == 2.5


def test_graphml_edge_values_match_the_manifest_workaround(mirror):
    path = mirror / "networks/celegansneural/celegansneural.xml.gz"
    raw = read_graphml(path)
    reference = _networkx_graphtool(path)
    expected = sorted(float.fromhex(v) for _, _, v in reference.edges(data="value"))
    assert raw.directed and raw.num_raw_edges == 2359
    assert sorted(raw.edge_attrs["value"]) == expected


def test_graphml_reader_parses_a_small_hand_written_file(tmp_path):
    path = tmp_path / "tiny.graphml"
    path.write_text(
        '<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
        '<key id="k0" for="node" attr.name="pos" attr.type="vector_float"/>'
        '<key id="k1" for="edge" attr.name="w" attr.type="double"/>'
        '<graph edgedefault="undirected"><node id="a"><data key="k0">0x1p+0, 0x1.4p+1</data></node>'
        '<node id="b"/><node id="c"/><edge source="a" target="b"><data key="k1">0x1.8p+0</data></edge>'
        '<edge source="b" target="a"/><edge source="c" target="c"/></graph></graphml>'
    )
    raw = read_graphml(path)
    assert raw.num_nodes == 3 and raw.edges.tolist() == [[0, 1], [1, 0], [2, 2]]
    assert raw.node_attrs["pos"] == [[1.0, 2.5]] and raw.edge_attrs["w"] == [1.5]
    data = simple_undirected(raw)  # b-a duplicates a-b; c-c is a self-loop
    assert data.num_nodes == 3 and data.edge_index.tolist() == [[0, 1], [1, 0]]


def test_topology_zoo_gml_multigraphs_parse_like_the_graphml(mirror):
    folder = mirror / "networks/topology_zoo"
    graphml = dict(iter_topology_zoo(folder / "graphml.tar.gz"))
    gml = dict(iter_topology_zoo(folder / "gml.tar.gz"))
    assert len(graphml) == 276 and sorted(gml) == sorted(graphml) == topology_zoo_names(
        folder / "graphml.tar.gz"
    )
    sizes = {name: (g.num_nodes, g.num_raw_edges) for name, g in graphml.items()}
    assert {name: (g.num_nodes, g.num_raw_edges) for name, g in gml.items()} == sizes
    # MANIFEST: all 276, multigraph edges counted
    assert np.sum(list(sizes.values()), axis=0).tolist() == [10952, 13976]


def test_network_repository_header_and_one_based_ids(tmp_path):
    path = tmp_path / "g.edges"
    path.write_text("% sym unweighted\n3 4 4\n1 2\n2 3\n4 1\n")
    raw = read_network_repository(path)
    assert raw.num_nodes == 4 and raw.edges.tolist() == [[0, 1], [1, 2], [3, 0]]


def test_sociopatterns_contacts_aggregate_to_pairs_ever_in_contact(mirror):
    path = mirror / "networks/sp_hospital/tij_hospital.dat"
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    pairs = {frozenset((i, j)) for _, i, j in rows}
    raw = read_contacts(path)
    assert raw.num_raw_edges == len(rows) == 32424  # MANIFEST: contact events
    assert count(simple_undirected(raw)) == (
        len({x for _, i, j in rows for x in (i, j)}),
        len(pairs),
    )


def test_multiplex_layers_aggregate_into_one_graph(tmp_path):
    path = tmp_path / "m.edges"
    path.write_text("1 1 2 1.0\n2 1 2 3.0\n2 2 3 1.0\n3 3 1 1\n")
    assert count(simple_undirected(read_multiplex(path))) == (3, 3)


def test_pajek_with_vertices_keeps_isolated_nodes(tmp_path):
    path = tmp_path / "g.net"
    path.write_text('*Vertices 4\n1 "a"\n2 "b"\n3 "c"\n4 "d"\n*Edges\n1 2\n2 3\n*Arcs\n3 1\n')
    raw = read_pajek(path)
    assert raw.num_nodes == 4 and raw.directed
    assert count(simple_undirected(raw)) == (4, 3)


def test_csv_edge_list_of_names(tmp_path):
    path = tmp_path / "e.txt"
    path.write_text("Ann Lee,Bo Chen,5,1\nBo Chen,Ann Lee,5,1\nBo Chen,Cy,1,1\n")
    raw = read_edge_list(path, delimiter=",")
    assert raw.num_nodes == 3 and count(simple_undirected(raw)) == (3, 2)


def _archive(path: Path, edges: str, nodes: str | None) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("edges.csv", edges)
        if nodes is not None:
            archive.writestr("nodes.csv", nodes)
    return path


def test_catalogue_csv_archive_keeps_isolated_nodes_from_nodes_csv(tmp_path):
    edges = '# source, target, weight\n0, 1, 1.0\n1, 2, "2,5"\n2, 0, 1\n'
    nodes = "# index, name\n0, a\n1, b\n2, c\n3, d\n"
    raw = netz_download.read_csv_archive(_archive(tmp_path / "n.csv.zip", edges, nodes))
    assert raw.num_nodes == 4 and raw.edges.tolist() == [[0, 1], [1, 2], [2, 0]]


def test_without_a_mirror_the_catalogue_archive_is_downloaded_once(tmp_path, monkeypatch):
    calls = []

    def fake_fetch(url, dest):
        calls.append(url)
        dest.parent.mkdir(parents=True, exist_ok=True)
        _archive(dest, "# source, target\n0, 1\n1, 2\n", "# index\n0\n1\n2\n")

    monkeypatch.setattr(netz_download, "fetch_url", fake_fetch)
    monkeypatch.delenv("GRAPHNETZ_DATA_MIRROR", raising=False)
    for _ in range(2):
        data = load_network(tmp_path, None, name="urban_streets", network="manhattan")
        assert count(data) == (3, 2)
    assert calls == ["https://networks.skewed.de/net/urban_streets/files/manhattan.csv.zip"]


@pytest.mark.parametrize("name", DOWNLOAD_ONLY)
def test_download_only_networks_offline_raise_the_named_error(tmp_path, offline, mirror, name):
    entry = network_entry(name)
    assert entry.mirror_file(entry.default_network) is None
    with pytest.raises(DatasetUnavailableError) as err:
        load_network(tmp_path, mirror, name=name)
    message = str(err.value)
    assert repr(name) in message and f"/net/{entry.catalogue}/files/" in message
    assert "Allow network access" in message


def test_a_mirror_network_without_mirror_offline_names_where_to_put_it(
    tmp_path, offline, monkeypatch
):
    monkeypatch.delenv("GRAPHNETZ_DATA_MIRROR", raising=False)
    with pytest.raises(
        DatasetUnavailableError, match=r"'euroroad'.*networks/euroroad/inf-euroroad.edges"
    ):
        load_network(tmp_path, None, name="euroroad")


# --- truncated files ---------------------------------------------------------------------

TRUNCATED = [
    ("power/power.xml.gz", read_graphml),
    ("train_terrorists/train_terrorists.graphml", read_graphml),
    ("euroroad/inf-euroroad.edges", read_network_repository),
    ("dnc/dnc-emails.txt", read_counted_edge_list),
    ("board_directors/net1m_2011-08-01.txt", read_edge_list),
    ("sp_hospital/tij_hospital.dat", read_contacts),
    ("eu_airlines/EUAirTransportation_multiplex.edges", read_multiplex),
    ("urban_streets/brasilia.net", read_pajek),
    ("product_space/network_sitc2_4digit.json", read_product_space),
    ("us_roads/road-minnesota.mtx", read_matrix_market),
    ("topology_zoo/graphml.tar.gz", topology_zoo_names),
]


@pytest.mark.parametrize(("relative", "reader"), TRUNCATED, ids=[r for r, _ in TRUNCATED])
def test_a_truncated_file_raises_the_named_error_naming_it(mirror, tmp_path, relative, reader):
    content = (mirror / "networks" / relative).read_bytes()
    half = len(content) // 2
    # cut inside a line (at a field separator), so that no format can read it as complete
    cut = min(i for i in (content.find(sep, half) for sep in (b" ", b"\t", b",")) if i > 0)
    path = tmp_path / Path(relative).name
    path.write_bytes(content[:cut])
    with pytest.raises(NetworkFormatError) as err:
        reader(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize(
    ("relative", "reader", "declared"),
    [
        ("euroroad/inf-euroroad.edges", read_network_repository, 1417),
        ("dnc/dnc-emails.txt", read_counted_edge_list, 10384),
    ],
)
def test_a_file_cut_at_a_line_end_misses_its_declared_edge_count(
    mirror, tmp_path, relative, reader, declared
):
    lines = (mirror / "networks" / relative).read_text().splitlines(keepends=True)
    path = tmp_path / Path(relative).name
    path.write_text("".join(lines[:100]))
    with pytest.raises(NetworkFormatError, match=f"declares {declared} edges but"):
        reader(path)


@pytest.mark.parametrize(
    ("name", "folder", "damaged", "nodes"),
    [
        ("terrorists_911", "terrorists_911", "9_11_edgelist.txt", 69),
        ("hospital_contacts", "sp_hospital", "tij_hospital.dat", 75),
        ("hospital_contacts", "sp_hospital", "metadata_hospital.dat", 75),
    ],
)
def test_a_mirror_file_cut_at_a_line_end_is_refused_by_its_checksum(
    mirror, tmp_path, no_download, name, folder, damaged, nodes
):
    """An edge list without a declared size reads as a smaller graph when cut at a line
    end: the mirror's SHA256SUMS catches it (and a damaged class file) before either is
    read in place."""
    from graphnetz.data.integrity import SUMS_NAME, CorruptDataError

    copy = tmp_path / "mirror"
    (copy / "networks" / folder).mkdir(parents=True)
    for f in (mirror / "networks" / folder).iterdir():
        (copy / "networks" / folder / f.name).write_bytes(f.read_bytes())
    (copy / SUMS_NAME).write_bytes((mirror / SUMS_NAME).read_bytes())
    assert load_network(tmp_path / "data", copy, name=name).num_nodes == nodes
    path = copy / "networks" / folder / damaged
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: len(lines) // 2]))
    with pytest.raises(CorruptDataError, match=damaged):
        load_network(tmp_path / "data", copy, name=name)


def test_a_truncated_catalogue_archive_raises_the_named_error(tmp_path):
    path = _archive(tmp_path / "n.csv.zip", "# source, target\n0, 1\n", None)
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(NetworkFormatError, match="n.csv.zip"):
        netz_download.read_csv_archive(path)


# --- feature rules -----------------------------------------------------------------------


def _graph(num_nodes: int = 60) -> Data:
    ring = torch.stack([torch.arange(num_nodes), (torch.arange(num_nodes) + 1) % num_nodes])
    chords = torch.stack(
        [torch.arange(0, num_nodes, 3), (torch.arange(0, num_nodes, 3) + 7) % num_nodes]
    )
    edges = torch.cat([ring, chords], dim=1)
    return Data(edge_index=torch.cat([edges, edges.flip(0)], dim=1), num_nodes=num_nodes)


def _by_hand(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    deg = np.bincount(edge_index[0].numpy(), minlength=num_nodes).astype(np.float64)
    d = np.log1p(deg) / np.log(num_nodes)
    return torch.tensor(np.stack([d, d**2, np.ones(num_nodes)], axis=1), dtype=torch.float32)


def test_degree_features_on_a_link_task_use_training_edges_only():
    full = _graph()
    marked = with_feature_rule(full, "degree", "ring", splits_edges=True)
    graph = LinkPredictionTask.prepare(marked, seed=0).graph
    held_out = graph.test_label_index[:, graph.test_label == 1]
    assert held_out.size(1) > 0
    training = graph.edge_index
    torch.testing.assert_close(graph.x, _by_hand(training, full.num_nodes))
    # with the held-out edges counted the features differ: the check above would catch a leak
    assert not torch.allclose(graph.x, _by_hand(full.edge_index, full.num_nodes))
    assert marked is not full and getattr(full, "feature_rule", None) is None  # cache untouched


def test_reference_all_edges_counts_the_held_out_edges_as_the_reference_did(monkeypatch):
    """The reproduction-only rule: degrees of every edge (the reference package's
    load-time features), so the held-out edges do shape them; one-hot ids below the limit."""
    import graphnetz.data.feature_rules as rules

    full = _graph()
    x, note = node_features("reference_all_edges", full.edge_index, 60)
    assert torch.equal(x, torch.eye(60)) and "one-hot" in note
    monkeypatch.setattr(rules, "ONE_HOT_LIMIT", 10)  # 60 nodes now take degree features
    marked = with_feature_rule(full, "reference_all_edges", "ring", splits_edges=True)
    graph = LinkPredictionTask.prepare(marked, seed=0).graph
    torch.testing.assert_close(graph.x, _by_hand(full.edge_index, full.num_nodes))
    assert not torch.allclose(graph.x, _by_hand(graph.edge_index, full.num_nodes))
    plain = LinkPredictionTask.prepare(
        with_feature_rule(full, "reference", "ring", splits_edges=True), seed=0
    ).graph
    torch.testing.assert_close(plain.x, _by_hand(plain.edge_index, full.num_nodes))


def test_degree_features_of_node_tasks_use_every_edge():
    full = _graph()
    marked = with_feature_rule(full, "degree", "ring", splits_edges=False)
    torch.testing.assert_close(marked.x, _by_hand(full.edge_index, full.num_nodes))
    assert marked.feature_note.startswith("degree:") and getattr(full, "x", None) is None


def test_reference_rule_is_one_hot_up_to_the_limit_then_degree():
    small = _graph(10)
    x, note = node_features("reference", small.edge_index, 10)
    assert torch.equal(x, torch.eye(10)) and "one-hot" in note
    big = ONE_HOT_LIMIT + 1
    edges = torch.tensor([[0, 1], [1, 0]])
    x, _ = node_features("reference", edges, big)
    torch.testing.assert_close(x, _by_hand(edges, big))
    x, _ = node_features("constant", edges, 5)
    assert torch.equal(x, torch.ones(5, 1))


def test_feature_descriptions_pass_and_misspelt_rules_fail():
    data = _graph(10)
    assert with_feature_rule(data, "given: bag-of-words", "cora", splits_edges=True) is data
    with pytest.raises(ValueError, match=r"'degre'.*\['reference', 'degree', 'constant', 'ref"):
        with_feature_rule(data, "degre", "ring", splits_edges=True)
    data.x = torch.ones(10, 4)
    with pytest.raises(ValueError, match=r"'ring' has node features \(width 4\)"):
        with_feature_rule(data, "degree", "ring", splits_edges=False)


def test_feature_rule_override_reaches_the_run(make_cfg, mirror):
    cfg = make_cfg("dataset=karate_network", "dataset.features=constant", mirror=mirror)
    from graphnetz.training.pipeline import build_run

    built = build_run(resolve_run(cfg))
    assert built.data.in_channels == 1 and built.data.info["features"].startswith("constant")


# --- a real run --------------------------------------------------------------------------


def test_train_py_on_euroroad_link_prediction_ends_ok(tmp_path, mirror, data_dir):
    run_dir = tmp_path / "run"
    proc = subprocess.run(
        [
            sys.executable,
            "train.py",
            "dataset=euroroad",
            "model=gcn",
            "trainer.max_epochs=2",
            "num_threads=1",
            f"hydra.run.dir={run_dir}",
            f"paths.data_dir={data_dir}",
            f"paths.data_mirror={mirror}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "GRAPHNETZ_DATA_MIRROR": ""},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(next(run_dir.rglob("result.json")).read_text())
    assert record["status"] == "ok" and record["task_type"] == "link_pred"
    assert record["epochs_run"] == 2 and 0.0 <= record["metrics"]["test"]["auc"] <= 1.0
    assert record["data"]["features"].startswith("reference: one-hot node ids (N = 1174")
