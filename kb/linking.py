"""Concept recognition: keyphrases from a question, linked to KG nodes by three rules in order.

1. ``exact``: the normalised phrase (or, failing that, its longest contiguous sub-span) equals a
   node name or alias in the store's name index;
2. ``fuzzy``: rapidfuzz ``ratio`` against all names/aliases, at least ``FUZZY_MIN`` (typos,
   plural/singular, punctuation variants);
3. ``embedding``: cosine between the phrase and the node-name embeddings at least ``EMBED_MIN``
   (synonyms such as "heart attack" -> "myocardial infarction").

Two lexical lookups serve everyday names, which no rule above links: :meth:`Linker.containing` (the
nodes whose name holds the phrase as whole words: "lupus", "Crohn's") and :meth:`Linker.by_initials`
("COPD", "T2DM"). They may find several nodes; the caller chooses among them (``tools.kg_paths`` keeps
those holding a fact of the asked relation).

Keyphrases come from KeyBERT running on the packaged MiniLM (``deps.embedder.model``). Each linked
concept records the rule that linked it, which the UI shows. Node-name embeddings are computed once
per graph and cached on disk next to the store (``kg_cache/<graph>.<model>.npy``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from kb.kg_store import KGStore, normalize_name

FUZZY_MIN = 90.0
EMBED_MIN = 0.78
MIN_PHRASE_CHARS = 3
# Generic words that would otherwise link to hub nodes and flood the subgraph.
GENERIC = {"patient", "patients", "man", "woman", "year", "years", "old", "history", "following", "likely",
           "physician", "comes", "shows", "day", "days", "week", "weeks", "month", "months", "normal",
           "examination", "emergency department", "department", "hospital", "most likely", "which",
           "increased", "decreased", "laboratory", "studies", "study", "test", "results", "findings", "boy",
           "girl", "child", "mother", "father", "presents", "symptoms", "use", "used", "thing", "things",
           "something", "person", "people", "type", "one", "two", "time", "good", "place"}
# Name parts and abbreviations stand for a node only when few nodes fit ("lupus": one disease; "cancer": forty).
MAX_NAME_READINGS = 50
ABBREVIATION = re.compile(r"^[A-Z][A-Z0-9]{1,5}$")  # "COPD", "T2DM"


class LinkedConcept(BaseModel):
    mention: str
    node_id: str
    name: str
    rule: str  # exact | fuzzy | embedding | entity-exact ...
    score: float
    index: int  # node index in KGStore.graph(source) order


def _model_key(embedder) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(getattr(embedder, "name", "model")))


def node_embeddings(store: KGStore, source: str, embedder, progress: bool = False) -> np.ndarray:
    """(n_nodes, d) float32, L2-normalised embeddings of the node names of ``source``, cached on disk."""
    g = store.graph(source)
    cache = store.cache_dir()
    stem = f"{source}.{_model_key(embedder)}"
    npy, meta_path = cache / f"{stem}.npy", cache / f"{stem}.json"
    stamp = {"loaded_at": store.loaded_at(source), "n": g.num_nodes}
    mem = getattr(store, "_embedding_cache", None)
    if mem is None:
        mem = store._embedding_cache = {}
    if stem in mem and mem[stem][0] == stamp:
        return mem[stem][1]
    if npy.exists() and meta_path.exists():
        try:
            if json.loads(meta_path.read_text()) == stamp:
                arr = np.load(npy).astype(np.float32)
                mem[stem] = (stamp, arr)
                return arr
        except (OSError, ValueError):
            pass
    arr = embedder.encode(g.names, batch_size=256, show_progress=progress)
    np.save(npy, arr.astype(np.float16))  # half precision on disk: ranking is unaffected
    meta_path.write_text(json.dumps(stamp))
    arr = arr.astype(np.float16).astype(np.float32)
    mem[stem] = (stamp, arr)
    return arr


@dataclass
class _Names:
    norms: list[str]
    indices: list[list[int]]


class Linker:
    """Links phrases of a question to the nodes of one graph (see the module docstring)."""

    def __init__(self, store: KGStore, source: str, embedder, *, fuzzy_min: float = FUZZY_MIN,
                 embed_min: float | None = EMBED_MIN):
        self.store = store
        self.source = source
        self.embedder = embedder
        self.graph = store.graph(source)
        self.alias = store.alias_index(source)
        self.fuzzy_min = fuzzy_min
        self.embed_min = embed_min
        self._names = _Names(list(self.alias), list(self.alias.values()))
        self._kw = None
        self._by_word: dict[str, list[int]] | None = None  # word -> positions in self._names (built on first use)
        self._by_initials: dict[str, list[int]] | None = None

    # -- keyphrases -------------------------------------------------------------------------
    def candidates(self, text: str, max_words: int = 4) -> list[str]:
        """Candidate phrases for KeyBERT: stop-word-delimited chunks plus n-grams naming a node.

        KeyBERT's default candidates (every 1-3-gram) cost seconds to embed on 2 cores for a
        MedQA vignette; chunks (as in RAKE) plus the n-grams found in the name index are a few
        dozen, and keep every phrase the exact rule could link.
        """
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        words = re.findall(r"[A-Za-z0-9][A-Za-z0-9'\-]*|[.,;:!?()]", text)
        chunks: list[str] = []
        current: list[str] = []
        for w in words + ["."]:
            lw = w.lower()
            if lw in ENGLISH_STOP_WORDS or not w[0].isalnum() or lw.isdigit():
                if current:
                    for i in range(0, len(current), max_words):
                        chunks.append(" ".join(current[i:i + max_words]))
                    current = []
            else:
                current.append(w)
        plain = [w for w in words if w[0].isalnum()]
        grams: list[str] = []
        for n in range(1, max_words + 1):
            for i in range(len(plain) - n + 1):
                span = " ".join(plain[i:i + n])
                norm = normalize_name(span)
                if (norm in self.alias and norm not in GENERIC and len(norm) >= MIN_PHRASE_CHARS
                        and plain[i].lower() not in ENGLISH_STOP_WORDS
                        and plain[i + n - 1].lower() not in ENGLISH_STOP_WORDS):
                    grams.append(span)
        seen: dict[str, str] = {}
        for c in chunks + grams:
            norm = normalize_name(c)
            if len(norm) >= MIN_PHRASE_CHARS and norm not in GENERIC:
                seen.setdefault(norm, c.lower())
        return list(seen.values())

    def keyphrases(self, text: str, top_n: int = 12) -> list[str]:
        """KeyBERT keyphrases of ``text`` (ranked against the whole text, MMR for diversity), best first."""
        cands = self.candidates(text)
        if not cands:
            return []
        if len(cands) <= 2:
            return cands
        if self._kw is None:
            from keybert import KeyBERT

            self._kw = KeyBERT(model=self.embedder.model)
        try:
            pairs = self._kw.extract_keywords(text, candidates=cands, top_n=min(top_n, len(cands)),
                                              keyphrase_ngram_range=(1, 4), stop_words=None,
                                              use_mmr=True, diversity=0.3)
        except ValueError:
            return cands[:top_n]
        return [p for p, _ in pairs]

    # -- everyday names: a part of a node's name, or its initials ----------------------------
    def containing(self, phrase: str) -> list[int]:
        """Nodes whose name holds ``phrase`` as whole words and more ("lupus" in "systemic lupus erythematosus",
        "Crohn's" in "Crohn's disease"); none when more than ``MAX_NAME_READINGS`` do ("cancer").

        What people call a disease is often a part of its ontology name; the caller decides which of these
        the question can mean (kg_paths keeps those holding facts of the asked relation).
        """
        words = normalize_name(phrase + " ").split()  # "crohn's" -> "crohn", as in the name index
        if not words or " ".join(words) in GENERIC or len(" ".join(words)) < MIN_PHRASE_CHARS:
            return []
        if self._by_word is None:
            by_word: dict[str, list[int]] = {}
            for pos, norm in enumerate(self._names.norms):
                for w in set(norm.split()):
                    by_word.setdefault(w, []).append(pos)
            self._by_word = by_word
        rarest = min(words, key=lambda w: len(self._by_word.get(w, ())))
        n = len(words)
        found: list[int] = []
        for pos in self._by_word.get(rarest, ()):
            name = self._names.norms[pos].split()
            if len(name) > n and any(name[i:i + n] == words for i in range(len(name) - n + 1)):
                found += [i for i in self._names.indices[pos] if i not in found]
                if len(found) > MAX_NAME_READINGS:
                    return []
        return found

    def by_initials(self, phrase: str) -> list[int]:
        """Nodes whose name's initials spell ``phrase``, written as an abbreviation in capitals ("COPD": chronic
        obstructive pulmonary disease; "T2DM": type 2 diabetes mellitus); none when more than
        ``MAX_NAME_READINGS`` do."""
        if not ABBREVIATION.match(phrase.strip()):
            return []
        if self._by_initials is None:
            by_initials: dict[str, list[int]] = {}
            for pos, norm in enumerate(self._names.norms):
                words = norm.split()
                if len(words) >= 2:
                    by_initials.setdefault("".join(w[0] for w in words), []).append(pos)
            self._by_initials = by_initials
        found: list[int] = []
        for pos in self._by_initials.get(phrase.strip().lower(), ()):
            found += [i for i in self._names.indices[pos] if i not in found]
        return found if len(found) <= MAX_NAME_READINGS else []

    # -- linking rules ----------------------------------------------------------------------
    def _exact(self, norm: str) -> tuple[str, int] | None:
        if norm in self.alias and norm not in GENERIC:
            return norm, self.alias[norm][0]
        words = norm.split()
        for n in range(len(words) - 1, 0, -1):  # longest sub-span first
            for i in range(len(words) - n + 1):
                span = " ".join(words[i:i + n])
                if len(span) >= MIN_PHRASE_CHARS and span not in GENERIC and span in self.alias:
                    return span, self.alias[span][0]
        return None

    def _fuzzy(self, norm: str) -> tuple[int, float] | None:
        if len(norm) < 5:
            return None  # short strings fuzz-match far too much
        from rapidfuzz import fuzz, process

        # A typo or an inflection keeps a word's first letter; a different first letter is a different word that
        # happens to be close ("ground" -> "round", 91: ConceptNet has no "ground", and the chat then asked
        # the evidence about "round" as well). So the best match that starts as the phrase does.
        for name, score, pos in process.extract(norm, self._names.norms, scorer=fuzz.ratio,
                                                score_cutoff=self.fuzzy_min, limit=5):
            if name[:1] == norm[:1]:
                return self._names.indices[pos][0], float(score)
        return None

    def _embedding(self, phrases: list[str]) -> list[tuple[int, float] | None]:
        if not phrases:
            return []
        if self.embed_min is None:  # rule switched off (e.g. ConceptNet 1-hop: exact, then fuzzy)
            return [None] * len(phrases)
        emb = node_embeddings(self.store, self.source, self.embedder)
        q = self.embedder.encode(phrases)
        sims = q @ emb.T
        out: list[tuple[int, float] | None] = []
        for row in sims:
            j = int(np.argmax(row))
            out.append((j, float(row[j])) if row[j] >= self.embed_min else None)
        return out

    def link_phrases(self, phrases: list[str], rule_prefix: str = "") -> list[LinkedConcept]:
        """Link each phrase by exact, then fuzzy, then embedding similarity; unmatched phrases drop out."""
        linked: list[LinkedConcept] = []
        pending: list[str] = []
        for phrase in phrases:
            norm = normalize_name(phrase)
            if len(norm) < MIN_PHRASE_CHARS or norm in GENERIC:
                continue
            hit = self._exact(norm)
            if hit:
                linked.append(self._concept(hit[0], hit[1], rule_prefix + "exact", 1.0))
                continue
            fz = self._fuzzy(norm)
            if fz:
                linked.append(self._concept(phrase, fz[0], rule_prefix + "fuzzy", fz[1] / 100.0))
                continue
            pending.append(phrase)
        for phrase, hit in zip(pending, self._embedding(pending)):
            if hit:
                linked.append(self._concept(phrase, hit[0], rule_prefix + "embedding", hit[1]))
        return _dedupe(linked)

    def link_text(self, text: str, top_n: int = 10) -> list[LinkedConcept]:
        """KeyBERT keyphrases of ``text``, linked (see :meth:`link_phrases`)."""
        return self.link_phrases(self.keyphrases(text, top_n=top_n))

    def _concept(self, mention: str, index: int, rule: str, score: float) -> LinkedConcept:
        return LinkedConcept(mention=mention, node_id=self.graph.ids[index], name=self.graph.names[index],
                             rule=rule, score=round(score, 4), index=index)


def _dedupe(concepts: list[LinkedConcept]) -> list[LinkedConcept]:
    seen: set[int] = set()
    out = []
    for c in concepts:
        if c.index not in seen:
            seen.add(c.index)
            out.append(c)
    return out
