"""Subgraph expansion, shortest paths and path verbalization over a :class:`kb.kg_store.KGGraph`.

Everything here is deterministic: ties are broken by node index.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from kb.kg_store import KGGraph


@dataclass
class Subgraph:
    """Nodes within ``max_hops`` of the seeds, as local indices.

    Attributes
    ----------
    nodes : ndarray (k,) int, global node indices; ``nodes[i]`` is local node ``i``
    hops : ndarray (k,) int, hop distance from the nearest seed
    edges : ndarray (e,) int, global edge ids with both ends in the subgraph
    edge_index : ndarray (2, e) int, (head, tail) in local indices
    """

    nodes: np.ndarray
    hops: np.ndarray
    edges: np.ndarray
    edge_index: np.ndarray
    local: dict[int, int] = field(default_factory=dict)
    truncated: bool = False

    @property
    def size(self) -> int:
        return len(self.nodes)


def expand(graph: KGGraph, seeds: list[int], *, max_hops: int = 3, node_budget: int = 2000,
           priority: np.ndarray | None = None) -> Subgraph:
    """Breadth-first expansion around ``seeds`` up to ``max_hops``, at most ``node_budget`` nodes.

    When a hop would overflow the budget, the new nodes with the highest ``priority`` (e.g. the
    cosine of their name to the question; shape (n_total,)) are kept, ties to the lower index.
    """
    seeds = list(dict.fromkeys(int(s) for s in seeds))[:node_budget]
    n_total = graph.num_nodes
    in_sub = np.zeros(n_total, dtype=bool)
    in_sub[seeds] = True
    order = list(seeds)
    hops = [0] * len(seeds)
    frontier = np.asarray(seeds, dtype=np.int64)
    truncated = False
    for hop in range(1, max_hops + 1):
        if frontier.size == 0 or len(order) >= node_budget:
            break
        parts = [graph.adj_nodes[graph.indptr[i]:graph.indptr[i + 1]] for i in frontier]
        if not parts:
            break
        cand = np.unique(np.concatenate(parts))
        cand = cand[~in_sub[cand]]
        room = node_budget - len(order)
        if cand.size > room:
            truncated = True
            if priority is not None:
                pick = np.lexsort((cand, -priority[cand]))[:room]
            else:
                pick = np.arange(room)
            cand = np.sort(cand[pick])
        in_sub[cand] = True
        order.extend(cand.tolist())
        hops.extend([hop] * cand.size)
        frontier = cand
    nodes = np.asarray(order, dtype=np.int64)
    local = np.full(n_total, -1, dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    emask = in_sub[graph.edge_head] & in_sub[graph.edge_tail]
    edges = np.nonzero(emask)[0]
    edge_index = np.stack([local[graph.edge_head[edges]], local[graph.edge_tail[edges]]]) if edges.size \
        else np.zeros((2, 0), dtype=np.int64)
    return Subgraph(nodes=nodes, hops=np.asarray(hops, dtype=np.int64), edges=edges,
                    edge_index=edge_index.astype(np.int64),
                    local={int(g): i for i, g in enumerate(nodes)}, truncated=truncated)


def local_adjacency(sub: Subgraph) -> list[list[tuple[int, int]]]:
    """Undirected adjacency in local indices: adj[u] = [(v, subgraph edge position), ...], sorted."""
    adj: list[list[tuple[int, int]]] = [[] for _ in range(sub.size)]
    for pos, (h, t) in enumerate(sub.edge_index.T.tolist()):
        if h == t:
            continue
        adj[h].append((t, pos))
        adj[t].append((h, pos))
    for lst in adj:
        lst.sort()
    return adj


def bfs_parents(adj: list[list[tuple[int, int]]], roots: list[int], max_depth: int) -> dict[int, tuple[int, int]]:
    """Multi-source BFS from ``roots``: node -> (parent, edge position); roots map to (-1, -1)."""
    parent: dict[int, tuple[int, int]] = {r: (-1, -1) for r in roots}
    depth = {r: 0 for r in roots}
    queue = deque(roots)
    while queue:
        u = queue.popleft()
        if depth[u] >= max_depth:
            continue
        for v, pos in adj[u]:
            if v not in parent:
                parent[v] = (u, pos)
                depth[v] = depth[u] + 1
                queue.append(v)
    return parent


def path_to_root(parent: dict[int, tuple[int, int]], start: int) -> tuple[list[int], list[int]] | None:
    """Follow BFS parents from ``start`` to its root: (nodes start..root, edge positions)."""
    if start not in parent:
        return None
    nodes, edges = [start], []
    u = start
    while parent[u][0] != -1:
        u, pos = parent[u]
        edges.append(pos)
        nodes.append(u)
    return nodes, edges


def shortest_path(adj: list[list[tuple[int, int]]], source: int, target: int,
                  max_depth: int = 6) -> tuple[list[int], list[int]] | None:
    """One shortest undirected path source -> target: (nodes, edge positions), or None."""
    parent = bfs_parents(adj, [target], max_depth)
    return path_to_root(parent, source)


@dataclass
class PathStep:
    head: str
    relation: str
    template: str
    tail: str
    forward: bool  # True when the path walks the edge from head to tail


def path_steps(graph: KGGraph, sub: Subgraph, nodes: list[int], edge_pos: list[int]) -> list[PathStep]:
    """Turn a local path into the KG triples it walks, keeping each edge's true direction."""
    steps = []
    for i, pos in enumerate(edge_pos):
        e = int(sub.edges[pos])
        h, t = int(graph.edge_head[e]), int(graph.edge_tail[e])
        rel = graph.relations[graph.edge_rel[e]]
        walked_from = int(sub.nodes[nodes[i]])
        steps.append(PathStep(graph.names[h], rel.name, rel.template, graph.names[t], forward=walked_from == h))
    return steps


def chain_text(steps: list[PathStep]) -> str:
    """``levodopa —treats→ Parkinson's disease —presents→ tremor`` (reverse edges as ``←rel—``)."""
    if not steps:
        return ""
    first = steps[0]
    parts = [first.head if first.forward else first.tail]
    for s in steps:
        if s.forward:
            parts.append(f"—{s.template}→ {s.tail}")
        else:
            parts.append(f"←{s.template}— {s.head}")
    return " ".join(parts)


def sentence_text(steps: list[PathStep]) -> str:
    """The same path as plain sentences: ``levodopa treats Parkinson's disease. ...``."""
    return " ".join(f"{s.head} {s.template} {s.tail}." for s in steps)
