"""Per-question, unsupervised node scoring with a small GAT (or GCN) — the UGAT-MedQA kernel.

For one question we train a fresh two-layer graph network over the retrieved subgraph:

    h_v = Conv2(ELU(Conv1(x, A)), A)           multi-head GATConv (or GCNConv), hidden size k
    z_v = x_v + u_v / (1 + |u_v|), u_v = W_q h_v   learned projection into query space (bounded residual)
    loss = mean_v (1 - cos(z_v, h_q))          no labels: every node is pulled toward the question
    score_v = cos(z_v, h_q) after T epochs

Node features ``x`` are the name embeddings and ``h_q`` the question embedding (same encoder).
The residual keeps a node's own meaning in its score; W_q starts at zero, so training can only add
what the neighbourhood (through attention) says about the question. Fixed seed and epoch count make
the scores reproducible. Sizes are tuned for the 1 s budget at 2,000 nodes on 2 CPU cores.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

DEFAULT_EPOCHS = 10
DEFAULT_HEADS = 4
DEFAULT_HIDDEN = 8  # per head
DEFAULT_LR = 0.02


class NodeScorer(nn.Module):
    """Two graph-convolution layers, then W_q into query space with a residual from the input."""

    def __init__(self, dim: int, *, conv: str = "gat", heads: int = DEFAULT_HEADS, hidden: int = DEFAULT_HIDDEN):
        super().__init__()
        from torch_geometric.nn import GATConv, GCNConv

        self.conv_kind = conv
        if conv == "gat":
            self.conv1 = GATConv(dim, hidden, heads=heads, concat=True, add_self_loops=True, bias=False)
            self.conv2 = GATConv(hidden * heads, hidden * heads, heads=1, add_self_loops=True, bias=False)
        elif conv == "gcn":
            self.conv1 = GCNConv(dim, hidden * heads, add_self_loops=True, bias=False)
            self.conv2 = GCNConv(hidden * heads, hidden * heads, add_self_loops=True, bias=False)
        else:
            raise ValueError(f"unknown conv {conv!r}; use 'gat' or 'gcn'")
        self.w_q = nn.Linear(hidden * heads, dim, bias=False)
        nn.init.zeros_(self.w_q.weight)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.elu(self.conv1(x, edge_index))
        h = self.conv2(h, edge_index)
        delta = self.w_q(h)
        # Bounded update (norm < 1): a node keeps its own name's meaning, so training cannot
        # collapse every node onto the question (the trivial minimum of the unsupervised loss).
        return x + delta / (1.0 + delta.norm(dim=1, keepdim=True))

    def attention(self, x: torch.Tensor, edge_index: torch.Tensor):
        """First layer's attention: (edge_index with self loops (2, E'), alpha (E', heads))."""
        if self.conv_kind != "gat":
            raise ValueError("attention weights exist only for the GAT variant")
        _, (ei, alpha) = self.conv1(x, edge_index, return_attention_weights=True)
        return ei, alpha


def _undirected(edge_index: np.ndarray) -> np.ndarray:
    if edge_index.size == 0:
        return edge_index.reshape(2, 0)
    both = np.concatenate([edge_index, edge_index[::-1]], axis=1)
    both = both[:, both[0] != both[1]]  # self loops are added by the layers
    return np.unique(both, axis=1)


def train_scorer(x: np.ndarray, edge_index: np.ndarray, q: np.ndarray, *, conv: str = "gat",
                 heads: int = DEFAULT_HEADS, hidden: int = DEFAULT_HIDDEN, epochs: int = DEFAULT_EPOCHS,
                 lr: float = DEFAULT_LR, seed: int = 0) -> tuple[NodeScorer, np.ndarray]:
    """Train a fresh scorer for one question and return it with the node scores.

    Parameters
    ----------
    x : ndarray (n, d) float32
        Node features (L2-normalised name embeddings).
    edge_index : ndarray (2, m) int
        Subgraph edges in local indices; direction is ignored (messages flow both ways).
    q : ndarray (d,) float32
        The question embedding.

    Returns
    -------
    model : NodeScorer
    scores : ndarray (n,) float32
        ``cos(z_v, q)`` after ``epochs`` epochs, in [-1, 1].
    """
    n, d = x.shape
    if n == 0:
        return NodeScorer(d, conv=conv, heads=heads, hidden=hidden), np.zeros(0, dtype=np.float32)
    threads = torch.get_num_threads()
    # One thread: on 2 shared cores, OpenMP workers spin against other processes and a 20-epoch
    # run took 10-20 s with two threads against 0.3 s with one (measured while vLLM was busy).
    torch.set_num_threads(1)
    try:
        return _train(x, edge_index, q, conv=conv, heads=heads, hidden=hidden, epochs=epochs, lr=lr, seed=seed)
    finally:
        torch.set_num_threads(threads)


def _train(x, edge_index, q, *, conv, heads, hidden, epochs, lr, seed):
    n, d = x.shape
    torch.manual_seed(seed)
    model = NodeScorer(d, conv=conv, heads=heads, hidden=hidden)
    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    ei = torch.from_numpy(_undirected(np.asarray(edge_index, dtype=np.int64)))
    qt = torch.from_numpy(np.asarray(q, dtype=np.float32)).reshape(1, -1)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        opt.zero_grad(set_to_none=True)
        loss = (1.0 - torch.nn.functional.cosine_similarity(model(xt, ei), qt, dim=1)).mean()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        scores = torch.nn.functional.cosine_similarity(model(xt, ei), qt, dim=1)
    return model, scores.numpy().astype(np.float32)


def score_nodes(x: np.ndarray, edge_index: np.ndarray, q: np.ndarray, **kw) -> np.ndarray:
    """Scores only (see :func:`train_scorer`)."""
    return train_scorer(x, edge_index, q, **kw)[1]


def cosine_scores(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The no-training baseline: ``cos(x_v, h_q)`` per node, the neighbourhood ignored.

    It is what :func:`train_scorer` returns before any epoch (``W_q`` starts at zero), so comparing the
    two measures exactly what the GAT adds (#18: ``variant="cosine"``, ``tests/bench/bench_kg.py``).
    """
    x = np.asarray(x, dtype=np.float32)
    if x.shape[0] == 0:
        return np.zeros(0, dtype=np.float32)
    q = np.asarray(q, dtype=np.float32).reshape(-1)
    norms = np.linalg.norm(x, axis=1) * max(float(np.linalg.norm(q)), 1e-12)
    return ((x @ q) / np.maximum(norms, 1e-12)).astype(np.float32)


def attention_weights(model: NodeScorer, x: np.ndarray, edge_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First-layer attention of a trained GAT scorer.

    Returns
    -------
    edges : ndarray (2, E') int64, (source, target) including self loops
    alpha : ndarray (E', heads) float32; for every target node and head the weights sum to 1.
    """
    xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    ei = torch.from_numpy(_undirected(np.asarray(edge_index, dtype=np.int64)))
    with torch.no_grad():
        e, a = model.attention(xt, ei)
    return e.numpy(), a.numpy()


def keep_threshold(scores: np.ndarray, theta: float | None, z: float = 1.0) -> float:
    """The keep threshold theta_0: a fixed cosine if given, else mean + z * std of this question's scores.

    Scores drift upward during training (every node is pulled toward the question), so a fixed
    cosine keeps nearly everything on some questions and nothing on others; the relative rule
    keeps the clear outliers.
    """
    if theta is not None:
        return float(theta)
    if scores.size == 0:
        return 1.0
    return float(scores.mean() + z * scores.std())
