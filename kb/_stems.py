"""Word-piece ids grouped by the English stem of the word they spell, for BM25 over word pieces.

The text store's BM25 terms are the embedder's word-piece ids, so "plants" and "plant", or "makes" and
"make", are different terms: "How do plants make their food?" shared no term with "photosynthesis makes
food for the plant" beyond "food". Mapping each whole-word piece to the first piece with the same
Snowball stem lets inflections match. Sub-word pieces ("##s") and pieces without letters keep their own id.
"""

from __future__ import annotations

import functools

import numpy as np
import snowballstemmer


def stem_classes_for_vocab(vocab: dict[str, int]) -> np.ndarray:
    """Class id per piece id, shape (max id + 1,): the smallest id whose word has the same stem.

    Parameters
    ----------
    vocab : dict
        Word piece -> id, as a Hugging Face tokenizer's ``get_vocab()`` gives it.
    """
    size = max(vocab.values()) + 1 if vocab else 0
    classes = np.arange(size, dtype=np.int64)
    stemmer = snowballstemmer.stemmer("english")
    first: dict[str, int] = {}
    for piece, i in sorted(vocab.items(), key=lambda kv: kv[1]):
        # Continuation pieces ("##ing") are parts of words, not words; short pieces are mostly
        # abbreviations, where a stem would merge unrelated terms ("us" and "use").
        if piece.startswith("##") or len(piece) < 3 or not piece.isalpha():
            continue
        stem = stemmer.stemWord(piece.lower())
        classes[i] = first.setdefault(stem, i)
    return classes


@functools.lru_cache(maxsize=4)
def stem_classes_for_model(name: str) -> np.ndarray | None:
    """:func:`stem_classes_for_vocab` for an embedding model's tokenizer, by name (no model weights loaded).

    None when the tokenizer cannot be read offline (then BM25 counts raw piece ids, as before).
    """
    from transformers import AutoTokenizer

    from kb.embeddings import resolve_model_path

    try:
        tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(name), local_files_only=True)
    except (OSError, ValueError, RuntimeError):
        return None
    return stem_classes_for_vocab(tokenizer.get_vocab())
