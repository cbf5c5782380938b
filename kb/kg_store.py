"""The knowledge-graph store: nodes, edges, relation templates and a name index, in SQLite.

Several graphs live side by side in one database file; each row carries its ``source`` (the graph
name: ``hetionet``, ``conceptnet``, ``medqa-ddb``, ``user``…) and a ``license``. Node ids are
``<source>:<local id>`` so graphs never collide.

Writes go through :meth:`KGStore.replace_graph`, which replaces one graph in a single transaction:
a loader validates everything first and then writes, so a failure leaves the previous state.

Reading for path retrieval goes through :meth:`KGStore.graph`, an in-memory :class:`KGGraph`
(arrays plus an undirected adjacency) cached per graph, because hop expansion touches thousands of
nodes per question and SQLite round trips would dominate the 1 s budget.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import sqlite_utils


class KGLoadError(ValueError):
    """A source could not be loaded; the message says where and why (shown to the user)."""


def normalize_name(text: str) -> str:
    """Lower-case, accents folded, punctuation to spaces, whitespace collapsed (the name-index key)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.lower().replace("'s ", " ").replace("’s ", " ")
    text = re.sub(r"[^0-9a-z]+", " ", text)
    return " ".join(text.split())


@dataclass
class Relation:
    name: str
    template: str  # verb phrase placed between head and tail: "treats", "is a risk factor for"
    source: str = ""
    description: str = ""


@dataclass
class GraphData:
    """Everything one loader produces, validated, before any write."""

    source: str
    license: str
    description: str
    nodes: list[tuple[str, str, str, str]] = field(default_factory=list)  # (local id, name, kind, license)
    edges: list[tuple[str, str, str, str]] = field(default_factory=list)  # (head id, relation, tail id, license)
    relations: list[Relation] = field(default_factory=list)
    aliases: list[tuple[str, str]] = field(default_factory=list)  # (local id, alias text)
    skipped: dict[str, int] = field(default_factory=dict)  # why -> count (e.g. non-commercial edges)
    # (head id, relation, tail id) -> where the edge comes from, in words (curation, agreement, resources).
    provenance: dict[tuple[str, str, str], str] = field(default_factory=dict)


def verbalize_triple(head: str, template: str, tail: str) -> str:
    return f"{head} {template} {tail}"


class KGGraph:
    """One graph in memory: node arrays, directed edges and an undirected CSR adjacency.

    Attributes
    ----------
    ids : list[str], length n
    names : list[str], length n
    kinds : list[str], length n
    edge_head, edge_tail : ndarray (m,) int32, node indices of each directed edge
    edge_rel : ndarray (m,) int32, index into ``relations``
    indptr, adj_nodes, adj_edges : undirected CSR: neighbours of node i are
        ``adj_nodes[indptr[i]:indptr[i+1]]`` reached through edges ``adj_edges[...]``.
    """

    def __init__(self, source: str, ids: list[str], names: list[str], kinds: list[str],
                 heads: np.ndarray, tails: np.ndarray, rels: np.ndarray, relations: list[Relation]):
        self.source = source
        self.ids = ids
        self.names = names
        self.kinds = kinds
        self.index = {nid: i for i, nid in enumerate(ids)}
        self.edge_head = heads.astype(np.int32)
        self.edge_tail = tails.astype(np.int32)
        self.edge_rel = rels.astype(np.int32)
        self.relations = relations
        n, m = len(ids), len(heads)
        ends = np.concatenate([self.edge_head, self.edge_tail])
        others = np.concatenate([self.edge_tail, self.edge_head])
        edge_ids = np.concatenate([np.arange(m), np.arange(m)]).astype(np.int32)
        order = np.argsort(ends, kind="stable")
        self.adj_nodes = others[order].astype(np.int32)
        self.adj_edges = edge_ids[order]
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.add.at(self.indptr, ends + 1, 1)
        self.indptr = np.cumsum(self.indptr)

    @property
    def num_nodes(self) -> int:
        return len(self.ids)

    @property
    def num_edges(self) -> int:
        return len(self.edge_head)

    def neighbors(self, i: int) -> np.ndarray:
        return self.adj_nodes[self.indptr[i]:self.indptr[i + 1]]

    def degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    def triple(self, e: int) -> tuple[str, str, str]:
        """(head name, relation name, tail name) of edge ``e``."""
        return (self.names[self.edge_head[e]], self.relations[self.edge_rel[e]].name,
                self.names[self.edge_tail[e]])


class KGStore:
    """SQLite-backed store of knowledge graphs (see the module docstring)."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._graphs: dict[str, KGGraph] = {}
        self._alias_cache: dict[str, dict[str, list[int]]] = {}
        conn = sqlite3.connect(str(self.path), check_same_thread=False)
        conn.isolation_level = None  # autocommit; replace_graph opens its own explicit transaction
        self.db = sqlite_utils.Database(conn)
        self._ensure_schema()

    # -- schema -----------------------------------------------------------------------------
    def _ensure_schema(self) -> None:
        db = self.db
        if "graphs" not in db.table_names():
            db["graphs"].create({"name": str, "description": str, "license": str, "loaded_at": float,
                                 "nodes": int, "edges": int, "skipped": str}, pk="name")
        if "nodes" not in db.table_names():
            db["nodes"].create({"id": str, "name": str, "kind": str, "source": str, "license": str}, pk="id")
            db["nodes"].create_index(["source"])
        if "edges" not in db.table_names():
            db["edges"].create({"head": str, "relation": str, "tail": str, "source": str, "license": str})
            db["edges"].create_index(["source"])
            db["edges"].create_index(["head"])
            db["edges"].create_index(["tail"])
        if "relations" not in db.table_names():
            db["relations"].create({"source": str, "name": str, "template": str, "description": str},
                                   pk=("source", "name"))
        if "aliases" not in db.table_names():
            db["aliases"].create({"norm": str, "node_id": str, "source": str, "text": str})
            db["aliases"].create_index(["norm"])
            db["aliases"].create_index(["source"])

    # -- writing ----------------------------------------------------------------------------
    def replace_graph(self, data: GraphData, also: Callable[[sqlite3.Connection], None] | None = None) -> dict[str, int]:
        """Replace graph ``data.source`` atomically; return counts. Raises KGLoadError on bad data.

        ``also`` writes rows of extra tables (a harvest's provenance) inside the same transaction; rows
        of ``data.source`` in every table with a ``source`` column are deleted first.
        """
        src = data.source
        node_ids = {local for local, *_ in data.nodes}
        if len(node_ids) != len(data.nodes):
            raise KGLoadError(f"{src}: duplicate node ids")
        rel_names = {r.name for r in data.relations}
        for h, r, t, _ in data.edges:
            if h not in node_ids or t not in node_ids:
                raise KGLoadError(f"{src}: edge ({h}, {r}, {t}) refers to an unknown node")
            if r not in rel_names:
                raise KGLoadError(f"{src}: edge ({h}, {r}, {t}) has a relation with no template")
        pref = f"{src}:"
        alias_rows = {(normalize_name(name), pref + local, name) for local, name, _, _ in data.nodes}
        alias_rows |= {(normalize_name(text), pref + local, text) for local, text in data.aliases
                       if local in node_ids}
        alias_rows = {row for row in alias_rows if row[0]}
        with self._replacing(src) as conn:
            conn.executemany("INSERT INTO nodes (id, name, kind, source, license) VALUES (?,?,?,?,?)",
                             ((pref + local, name, kind, src, lic) for local, name, kind, lic in data.nodes))
            if data.provenance and not self._has_provenance_column():
                # Added on the first write that has provenance, never on open: opening a shared store
                # to read must not change it.
                conn.execute("ALTER TABLE edges ADD COLUMN provenance TEXT")
            if self._has_provenance_column():
                conn.executemany(
                    "INSERT INTO edges (head, relation, tail, source, license, provenance) VALUES (?,?,?,?,?,?)",
                    ((pref + h, r, pref + t, src, lic, data.provenance.get((h, r, t)))
                     for h, r, t, lic in data.edges))
            else:
                conn.executemany("INSERT INTO edges (head, relation, tail, source, license) VALUES (?,?,?,?,?)",
                                 ((pref + h, r, pref + t, src, lic) for h, r, t, lic in data.edges))
            conn.executemany("INSERT INTO relations (source, name, template, description) VALUES (?,?,?,?)",
                             ((src, r.name, r.template, r.description) for r in data.relations))
            conn.executemany("INSERT INTO aliases (norm, node_id, source, text) VALUES (?,?,?,?)",
                             ((norm, nid, src, text) for norm, nid, text in sorted(alias_rows)))
            conn.execute("INSERT INTO graphs (name, description, license, loaded_at, nodes, edges, skipped)"
                         " VALUES (?,?,?,?,?,?,?)",
                         (src, data.description, data.license, time.time(), len(data.nodes),
                          len(data.edges), json.dumps(data.skipped)))
            if also is not None:
                also(conn)
        return {"nodes": len(data.nodes), "edges": len(data.edges), "relations": len(data.relations),
                "aliases": len(alias_rows), **{f"skipped_{k}": v for k, v in data.skipped.items()}}

    @contextmanager
    def _replacing(self, source: str):
        """One transaction that first deletes graph ``source`` from every table keyed by it; caches dropped after."""
        conn = self.db.conn
        with self._lock:
            try:
                conn.execute("BEGIN")
                for table in self.db.table_names():
                    if table != "graphs" and "source" in self.db[table].columns_dict:
                        conn.execute(f"DELETE FROM [{table}] WHERE source = ?", (source,))
                conn.execute("DELETE FROM graphs WHERE name = ?", (source,))
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            finally:
                self._graphs.pop(source, None)
                self._alias_cache.pop(source, None)

    def remove_graph(self, source: str) -> bool:
        """Drop graph ``source`` and every row that belongs to it, in one transaction; False if absent."""
        if not self.has_graph(source):
            return False
        with self._replacing(source):
            pass
        return True

    # -- reading ----------------------------------------------------------------------------
    def graph_names(self) -> list[str]:
        return [r["name"] for r in self.db.query("SELECT name FROM graphs ORDER BY name")]

    def has_graph(self, name: str) -> bool:
        return name in self.graph_names()

    def stats(self) -> list[dict]:
        """One row per graph: counts, license, relation count, skipped edges."""
        rows = []
        for g in self.db.query("SELECT * FROM graphs ORDER BY name"):
            nrel = next(self.db.query("SELECT count(*) AS c FROM relations WHERE source = ?", [g["name"]]))["c"]
            rows.append({"name": g["name"], "nodes": g["nodes"], "edges": g["edges"], "relations": nrel,
                         "license": g["license"], "skipped": json.loads(g["skipped"] or "{}"),
                         "description": g["description"]})
        return rows

    def relations(self, source: str) -> dict[str, Relation]:
        return {r["name"]: Relation(r["name"], r["template"], source, r["description"])
                for r in self.db.query("SELECT * FROM relations WHERE source = ?", [source])}

    def _has_provenance_column(self) -> bool:
        return any(row[1] == "provenance" for row in self.db.conn.execute("PRAGMA table_info(edges)"))

    def edge_details(self, source: str, triples: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], dict]:
        """License and provenance of edges given as (head id, relation name, tail id) of graph ``source``.

        Stores written before provenance existed have no such column; their edges report only a license.
        """
        if not triples:
            return {}
        cols = "license, provenance" if self._has_provenance_column() else "license, NULL"
        out: dict[tuple[str, str, str], dict] = {}
        with self._lock:
            for h, r, t in triples:
                row = self.db.conn.execute(f"SELECT {cols} FROM edges WHERE head = ? AND relation = ? AND tail = ?"
                                           " AND source = ? LIMIT 1", (h, r, t, source)).fetchone()
                if row is not None:
                    out[(h, r, t)] = {"license": row[0] or "", "provenance": row[1] or ""}
        return out

    def edges_between(self, source: str) -> Iterable[dict]:
        return self.db.query("SELECT head, relation, tail, license FROM edges WHERE source = ?", [source])

    def graph(self, source: str) -> KGGraph:
        """The in-memory graph ``source`` (loaded once, then cached)."""
        with self._lock:
            if source in self._graphs:
                return self._graphs[source]
            if not self.has_graph(source):
                raise KeyError(source)
            conn = self.db.conn
            rows = conn.execute("SELECT id, name, kind FROM nodes WHERE source = ? ORDER BY rowid",
                                (source,)).fetchall()
            ids = [r[0] for r in rows]
            index = {nid: i for i, nid in enumerate(ids)}
            rel_map = self.relations(source)
            relations = sorted(rel_map.values(), key=lambda r: r.name)
            rel_index = {r.name: i for i, r in enumerate(relations)}
            edges = conn.execute("SELECT head, relation, tail FROM edges WHERE source = ? ORDER BY rowid",
                                 (source,)).fetchall()
            heads = np.fromiter((index[h] for h, _, _ in edges), dtype=np.int64, count=len(edges))
            tails = np.fromiter((index[t] for _, _, t in edges), dtype=np.int64, count=len(edges))
            rels = np.fromiter((rel_index[r] for _, r, _ in edges), dtype=np.int64, count=len(edges))
            g = KGGraph(source, ids, [r[1] for r in rows], [r[2] for r in rows], heads, tails, rels, relations)
            self._graphs[source] = g
            return g

    def alias_index(self, source: str) -> dict[str, list[int]]:
        """normalised name -> node indices of graph ``source`` (in :meth:`graph` order)."""
        with self._lock:
            if source not in self._alias_cache:
                g = self.graph(source)
                idx: dict[str, list[int]] = {}
                for norm, nid in self.db.conn.execute(
                        "SELECT norm, node_id FROM aliases WHERE source = ? ORDER BY norm, node_id", (source,)):
                    i = g.index.get(nid)
                    if i is not None and i not in idx.setdefault(norm, []):
                        idx[norm].append(i)
                self._alias_cache[source] = idx
            return self._alias_cache[source]

    def cache_dir(self) -> Path:
        """Where derived per-graph files (node-name embeddings) are kept."""
        d = self.path.parent / "kg_cache"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def loaded_at(self, source: str) -> float:
        row = next(self.db.query("SELECT loaded_at FROM graphs WHERE name = ?", [source]), None)
        return float(row["loaded_at"]) if row else 0.0

    def close(self) -> None:
        self.db.conn.close()
