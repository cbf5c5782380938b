"""UCRET column filtering (and UCRET-JS), plus row selection for long tables.

Columns survive if they share enough words with the claim (Jaccard >= tau), if one of their cells
is a value the claim names (beyond the paper: a claimed number such as "2011" or "0.93", or a
cell's text such as "Quebec" — Jaccard alone misses these in long columns), or if they fall in
the spherical-k-means cluster whose centroid is closest to the claim (cosine >= theta, or with
UCRET-JS a Jensen–Shannon distance below ``jsd_max``). If nothing survives, the two columns
most similar to the claim are kept. The row-label column is always kept.

Beyond the paper: tables longer than ``max_rows`` are first cut to the rows that mention the
claim's entities and numbers (IDF-weighted word overlap plus number matches), so a
10,000-row upload still fits a small model's context. Everything kept or dropped is reported
with its score and reason.
"""

from __future__ import annotations

import math
import re
import time
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from kb.tables import _MARKUP, Table, parse_number
from tools._colfilter import claim_numbers, jaccard, js_distance, number_matches, softmax, spherical_kmeans, tokens
from tools.registry import ToolContext, ToolError, tool

TAU = 0.25          # UCRET lexical threshold
TAU_JS = 0.20       # UCRET-JS lexical threshold
THETA = 0.60        # cosine between claim and the chosen centroid
JSD_MAX = 0.30      # UCRET-JS: accept the cluster below this JS distance
# Softmax temperature for UCRET-JS. At temperature 1 the softmax of a 384-d unit vector is
# almost uniform and every JS distance is ~0.02, so nothing could ever be rejected. At 0.065,
# two MiniLM vectors with cosine 0.60 (UCRET's theta) sit at a JS distance of about 0.30
# (UCRET-JS's threshold), so the two tests agree (measured on SciTab texts: 0.06 -> 0.31,
# 0.07 -> 0.27; correlation of distance and cosine -0.92).
JSD_TEMPERATURE = 0.065
LONG_TABLE_ROWS = 50
MAX_COLUMN_TEXT = 300  # characters of header + cells embedded per column (speed; MiniLM sees ~256 tokens)

Reason = Literal["lexical", "value-match", "semantic", "fallback", "row-label"]


class ColumnScore(BaseModel):
    col: int = Field(description="1-based column number in the full table (C<col>).")
    name: str
    jaccard: float
    similarity: float = Field(description="Cosine between the column's and the claim's embeddings.")
    jsd: float | None = None
    cluster: int | None = None
    kept: bool = False
    reasons: list[Reason] = Field(default_factory=list)


class FilterResult(BaseModel):
    method: Literal["cosine", "jsd"]
    columns: list[ColumnScore]
    kept_cols: list[int] = Field(description="1-based columns kept, in table order.")
    rows: list[int] = Field(description="1-based rows kept, in table order.")
    row_note: str = ""
    cluster_score: float | None = Field(None, description="Best centroid's cosine (or JS distance).")
    cluster_accepted: bool = False
    elapsed_ms: float = 0.0

    @property
    def kept(self) -> list[ColumnScore]:
        return [c for c in self.columns if c.kept]

    @property
    def dropped(self) -> list[ColumnScore]:
        return [c for c in self.columns if not c.kept]

    def summary(self) -> str:
        """One line per decision, for the step shown in the UI."""
        kept = ", ".join(f"C{c.col} {c.name} ({'/'.join(c.reasons)}; J={c.jaccard:.2f}, cos={c.similarity:.2f})"
                         for c in self.kept)
        dropped = ", ".join(f"C{c.col} {c.name} (J={c.jaccard:.2f}, cos={c.similarity:.2f})" for c in self.dropped)
        text = f"kept {kept or 'none'}"
        if dropped:
            text += f"; dropped {dropped}"
        if self.row_note:
            text += f"; {self.row_note}"
        return text


def select_rows(table: Table, claim: str, max_rows: int = LONG_TABLE_ROWS) -> tuple[list[int], str]:
    """Rows relevant to the claim when the table is long; all rows otherwise.

    A row scores the IDF-weighted claim words it contains plus 2 per claimed number it shows
    (allowing the claim's rounding). The best ``max_rows`` rows are kept in table order.
    """
    n = table.n_rows
    if n <= max_rows:
        return list(range(1, n + 1)), ""
    claim_words = {t for t in tokens(claim) if not t[0].isdigit()}
    wanted = claim_numbers(claim)
    row_tokens = [tokens(" ".join(row)) for row in table.rows]
    df = {w: sum(1 for toks in row_tokens if w in toks) for w in claim_words}
    idf = {w: math.log((n + 1) / (d + 0.5)) for w, d in df.items() if d}
    scores = np.zeros(n)
    for i, toks in enumerate(row_tokens):
        score = sum(idf.get(w, 0.0) for w in claim_words & toks)
        if wanted:
            values = [v for v in (parse_number(x) for x in table.rows[i]) if v is not None]
            score += 2.0 * sum(1 for w in wanted if any(number_matches(v, w) for v in values))
        scores[i] = score
    matched = int(np.count_nonzero(scores > 0))
    if matched == 0:
        return list(range(1, max_rows + 1)), (
            f"no row mentions the claim's words or numbers; showing the first {max_rows} of {n:,} rows")
    order = np.argsort(-scores, kind="stable")[: min(max_rows, matched)]
    rows = sorted(int(i) + 1 for i in order)
    return rows, f"kept {len(rows)} of {n:,} rows that match the claim ({matched:,} matched at least one word or number)"


def value_match_columns(table: Table, claim: str, rows: list[int]) -> set[int]:
    """0-based columns with a cell that equals a number in the claim or whose text the claim quotes."""
    # Single-digit integers ("3 models") match too many cells to mean anything.
    wanted = [w for w in claim_numbers(claim) if not (w.is_integer() and abs(w) < 10)]
    low = " " + " ".join(_WORDS.findall(claim.lower())) + " "
    out = set()
    for c in range(table.n_cols):
        for r in rows:
            cell = table.rows[r - 1][c]
            if not cell:
                continue
            value = parse_number(cell)
            if value is not None:
                if any(number_matches(value, w) for w in wanted):
                    out.add(c)
                    break
                continue
            words = " ".join(_WORDS.findall(_MARKUP.sub(" ", cell).lower()))
            # whole words only, and not a cell made of stopwords ("the", "and")
            if len(words) >= 3 and tokens(words) and f" {words} " in low:
                out.add(c)
                break
    return out


_WORDS = re.compile(r"[^\W_]+(?:[.,][0-9]+)*", re.UNICODE)


def column_text(table: Table, c: int, rows: list[int], max_chars: int = MAX_COLUMN_TEXT) -> str:
    """Header plus distinct non-empty cells, cut to ``max_chars`` (what gets embedded)."""
    seen: dict[str, None] = {}
    for r in rows:
        v = table.rows[r - 1][c - 1].strip()
        if v:
            seen.setdefault(v, None)
    text = table.columns[c - 1] + ": " + ", ".join(seen)
    return text[:max_chars]


def filter_table(table: Table, claim: str, embedder, *, method: Literal["cosine", "jsd"] = "cosine",
                 tau: float | None = None, theta: float = THETA, jsd_max: float = JSD_MAX, k: int = 2,
                 seed: int = 0, max_rows: int = LONG_TABLE_ROWS, value_match: bool = True,
                 jsd_temperature: float = JSD_TEMPERATURE) -> FilterResult:
    """Choose the columns (and, for long tables, rows) of ``table`` that bear on ``claim``."""
    if method not in ("cosine", "jsd"):
        raise ValueError(f"unknown filter method {method!r}")
    t0 = time.perf_counter()
    tau = (TAU if method == "cosine" else TAU_JS) if tau is None else tau
    rows, row_note = select_rows(table, claim, max_rows)
    n_cols = table.n_cols
    claim_tokens = tokens(claim)
    scores = []
    texts = []
    for c in range(1, n_cols + 1):
        cells = " ".join(table.rows[r - 1][c - 1] for r in rows)
        scores.append(jaccard(claim_tokens, tokens(table.columns[c - 1] + " " + cells)))
        texts.append(column_text(table, c, rows))
    vecs = np.asarray(embedder.encode([claim] + texts, fast=True), dtype=np.float64)  # one batch: the speed target
    claim_vec, col_vecs = vecs[0], vecs[1:]
    sims = col_vecs @ claim_vec
    jsds = None
    if method == "jsd":
        claim_p = softmax(claim_vec, jsd_temperature)
        jsds = js_distance(softmax(col_vecs, jsd_temperature), claim_p)

    columns = [ColumnScore(col=c + 1, name=table.columns[c], jaccard=float(scores[c]), similarity=float(sims[c]),
                           jsd=None if jsds is None else float(jsds[c])) for c in range(n_cols)]
    lexical = {c for c in range(n_cols) if scores[c] >= tau}
    matched = (value_match_columns(table, claim, rows) - lexical) if value_match else set()
    remaining = [c for c in range(n_cols) if c not in lexical]
    semantic: set[int] = set()
    cluster_score, accepted = None, False
    if remaining:
        km = spherical_kmeans(col_vecs[remaining], k, seed=seed)
        for i, c in enumerate(remaining):
            columns[c].cluster = int(km.labels[i])
        if method == "cosine":
            centroid_scores = km.centroids @ claim_vec
            best = int(np.argmax(centroid_scores))
            cluster_score = float(centroid_scores[best])
            accepted = cluster_score >= theta
        else:
            centroid_scores = js_distance(softmax(km.centroids, jsd_temperature), softmax(claim_vec, jsd_temperature))
            best = int(np.argmin(centroid_scores))
            cluster_score = float(centroid_scores[best])
            accepted = cluster_score < jsd_max
        if accepted:
            semantic = {c for i, c in enumerate(remaining) if km.labels[i] == best}
    for c in lexical:
        columns[c].reasons.append("lexical")
    for c in semantic:
        columns[c].reasons.append("semantic")
    # The paper's fallback looks only at its own two tests; value matches are purely additive.
    if not lexical and not semantic:
        for c in np.argsort(-sims, kind="stable")[:2]:
            columns[int(c)].reasons.append("fallback")
    for c in matched:
        columns[c].reasons.append("value-match")
    label_col = table.row_label_col
    if label_col is not None and not columns[label_col - 1].reasons:
        columns[label_col - 1].reasons.append("row-label")
    for col in columns:
        col.kept = bool(col.reasons)
    return FilterResult(method=method, columns=columns, kept_cols=[c.col for c in columns if c.kept], rows=rows,
                        row_note=row_note, cluster_score=cluster_score, cluster_accepted=accepted,
                        elapsed_ms=(time.perf_counter() - t0) * 1000)


def whole_table(table: Table, claim: str, max_rows: int = LONG_TABLE_ROWS) -> FilterResult:
    """The "no filtering" view: every column; long tables still cut to matching rows."""
    rows, note = select_rows(table, claim, max_rows)
    cols = [ColumnScore(col=c, name=table.columns[c - 1], jaccard=0.0, similarity=0.0, kept=True)
            for c in range(1, table.n_cols + 1)]
    return FilterResult(method="cosine", columns=cols, kept_cols=list(range(1, table.n_cols + 1)), rows=rows,
                        row_note=note)


# -- the tool -----------------------------------------------------------------------------------
def resolve_table(ctx: ToolContext, name: str | None) -> Table:
    """The named uploaded table (or the active one), or a clear ToolError."""
    table = ctx.session.find_table(name)
    if table is not None:
        return table
    if not ctx.session.tables:
        raise ToolError("No table has been uploaded in this conversation; upload a CSV, TSV, XLSX, JSON, "
                        "Markdown or HTML table first.")
    names = ", ".join(ctx.session.tables)
    raise ToolError(f"No uploaded table matches {name!r}; the tables here are: {names}.")


class Input(BaseModel):
    claim: str = Field(description="The claim or question to select columns for.")
    table: str | None = Field(None, description="Name of an uploaded table; default: the latest one.")
    method: Literal["cosine", "jsd"] = Field("cosine", description="cosine (UCRET) or jsd (UCRET-JS).")


class KeptColumn(BaseModel):
    col: int
    name: str
    reasons: list[str]
    jaccard: float
    similarity: float


class Output(BaseModel):
    table: str
    table_id: str = Field(description="Evidence id of the collapsed table (T<n>).")
    kept: list[KeptColumn]
    dropped: list[KeptColumn]
    rows: list[int]
    row_note: str
    collapsed: str = Field(description="The collapsed table as Markdown with R#/C# coordinates.")


@tool("table_filter", cpu_bound=True)
def table_filter(ctx: ToolContext, args: Input) -> Output:
    """Select the columns (and rows of a long table) of an uploaded table that are relevant to a claim."""
    if not args.claim.strip():
        raise ToolError("Give a claim or question to select columns for.")
    table = resolve_table(ctx, args.table)
    result = filter_table(table, args.claim, ctx.deps.embedder, method=args.method)
    markdown = table.to_markdown(cols=result.kept_cols, rows=result.rows, max_rows=None, max_chars=8000)
    shown = [r for r in result.rows if f"| R{r} |" in markdown]
    ev = ctx.evidence.add_table(table.name, markdown, source=table.title,
                                columns=[table.columns[c - 1] for c in result.kept_cols],
                                col_numbers=result.kept_cols, row_numbers=shown,
                                rows=[[table.rows[r - 1][c - 1] for c in result.kept_cols] for r in shown],
                                highlighted=[], filter=result.summary())

    def kept_column(c: ColumnScore) -> KeptColumn:
        return KeptColumn(col=c.col, name=c.name, reasons=list(c.reasons), jaccard=round(c.jaccard, 3),
                          similarity=round(c.similarity, 3))

    return Output(table=table.name, table_id=ev.id, kept=[kept_column(c) for c in result.kept],
                  dropped=[kept_column(c) for c in result.dropped], rows=result.rows, row_note=result.row_note,
                  collapsed=markdown)
