"""Table programs as SQL: one read-only SELECT over an in-memory SQLite copy of the table (issue 13).

The second program form beside the fixed operations of ``tools._table_ops``. The model writes one
query under a context-free grammar (:func:`sql_grammar`, vLLM structured outputs, xgrammar EBNF) that
admits only ``SELECT ... FROM t`` over this table's own column identifiers, typed: numbers are
compared with numbers and aggregated, text with quoted strings. A claim's query returns the value
that decides it beside a boolean::

    SELECT cases AS value, cases = 678 AS verdict FROM t WHERE province = 'Quebec' AND year = 2011

The grammar makes most of what could go wrong unwritable; :func:`execute_sql` does not trust it.
sqlglot parses the query and refuses anything but one SELECT over ``t`` (no joins, CTEs, unions or
functions outside an allow-list), and the query runs in a :class:`Sandbox`: a private in-memory
database, ``query_only``, an authorizer that allows only reads of ``t`` and the allowed functions,
a progress handler that stops it after a time limit, and a cap on the rows it may return. Refusals
are :class:`~tools._table_ops_model.ProgramError`, one sentence each, never a crash.

Comparisons mean what the fixed operations mean (``tools._cells.compare``): text case-, accent-
and markup-insensitively (a collation), numbers within the precision the claim wrote them with
("3.5" matches 3.46), and a short form of a cell ("Quebec" for "Quebec (QC)") as whole words when no
cell equals it. sqlglot rewrites the query for that before it runs; the user sees the query as written.

The citations come from execution: the columns each (sub)query reads, in the rows that decided it
(the returned rows, the rows an aggregate read, or the rows holding a minimum or maximum), as
1-based ``(row, column)`` cells in an :class:`~tools._table_ops_model.Execution`, like the fixed operations'.
"""

from __future__ import annotations

import fnmatch
import math
import re
import sqlite3
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from tools._cells import TypedTable, cell_number, compare, format_value, is_empty, norm_text, words_match
from tools._table_grammar import GrammarSpec
from tools._table_ops_model import MAX_CELLS, MAX_ROWS, MIRRORED_OPS, TIME_LIMIT_S, VALUE_MAX_CHARS, Execution, \
    ProgramError

Kind = Literal["claim", "question"]
TABLE = "t"
ROW_ID = "_r"  # the 1-based row number; identifiers from tools._cells never start with "_"
SQL_MAX_CHARS = 1500
MAX_RESULT_ROWS = 1000
MAX_SUBQUERY_DEPTH = 1
PROGRESS_EVERY = 1000  # SQLite virtual-machine steps between clock checks
# What the model may call (sqlglot class names) and what the authorizer lets SQLite run (lower-case names).
ALLOWED_SQLGLOT = {"Count", "Sum", "Avg", "Min", "Max", "Abs", "Round", "Lower", "Upper", "Length", "Coalesce",
                   "Case", "If", "Cast"}
_INTERNAL = {"ev_cmp", "ev_words", "ev_starts"}  # added by the rewrite below, never written by the model
ALLOWED_SQLITE = {"count", "sum", "avg", "min", "max", "abs", "round", "lower", "upper", "length", "coalesce",
                  "ifnull", "iif", "like"} | _INTERNAL
_CMP_NODES = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_REFUSED = {exp.With: "WITH (common table expressions)", exp.Union: "UNION", exp.Except: "EXCEPT",
            exp.Intersect: "INTERSECT", exp.Join: "joins", exp.Lateral: "LATERAL", exp.Star: "SELECT *",
            exp.Placeholder: "parameters", exp.Parameter: "parameters", exp.Window: "window functions"}


# -- the SQLite copy of the table -------------------------------------------------------------------
@lru_cache(maxsize=100_000)
def _folded(text: str) -> str:
    """``norm_text`` once per distinct cell: a sort or a LIKE calls it for every comparison."""
    return norm_text(text)


def _collate(a: str, b: str) -> int:
    x, y = _folded(a), _folded(b)
    return (x > y) - (x < y)


@lru_cache(maxsize=256)
def _like_regex(pattern: str, escape: str | None) -> re.Pattern:
    # fnmatch's translation, not a hand-made ".*" regex: it does not backtrack exponentially on many "%".
    glob, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if escape and ch == escape and i + 1 < len(pattern):
            ch, i = pattern[i + 1], i + 1
            glob.append(f"[{ch}]" if ch in "*?[" else ch)
        else:
            glob.append("*" if ch == "%" else "?" if ch == "_" else f"[{ch}]" if ch in "*?[" else ch)
        i += 1
    return re.compile(fnmatch.translate("".join(glob)))


def _like(pattern: object, value: object, escape: object = None) -> int | None:
    """SQL LIKE (SQLite calls ``like(pattern, value)``) on the normalised texts: case, accents, markup ignored."""
    if pattern is None or value is None:
        return None
    regex = _like_regex(_folded(str(pattern)), str(escape) if escape else None)
    return int(regex.match(_folded(str(value))) is not None)


def _ev_cmp(left: object, op: str, right_text: str) -> int | None:
    """``left op right`` as the fixed operations compare (numbers within the written precision)."""
    if left is None:
        return None
    number = float(left) if isinstance(left, (int, float)) else cell_number(left)
    text = format_value(float(left)) if isinstance(left, (int, float)) else str(left)
    return int(compare(text, number, op, right_text))


def _ev_words(cell: object, value: str) -> int | None:
    return None if cell is None else int(words_match(str(cell), value))


def _ev_starts(cell: object, prefix: str) -> int | None:
    return None if cell is None else int(_folded(str(cell)).startswith(_folded(prefix)))


@lru_cache(maxsize=512)
def needs_quotes(ident: str) -> bool:
    """Whether ``ident`` must be written ``"ident"`` in SQL: a keyword to SQLite or to sqlglot."""
    try:
        con = sqlite3.connect(":memory:")
        try:
            con.execute(f"CREATE TABLE x ({ident} REAL)")
            con.execute(f"SELECT {ident} FROM x WHERE {ident} = 1 ORDER BY {ident}")
        finally:
            con.close()
        tree = sqlglot.parse_one(f"SELECT {ident} AS value FROM t WHERE {ident} = 1 ORDER BY {ident} LIMIT 1",
                                 read="sqlite")
    except (sqlite3.Error, ParseError, TokenError):
        return True
    names = [c.name for c in tree.find_all(exp.Column)]
    return names != [ident] * 3


def sql_name(ident: str) -> str:
    return f'"{ident}"' if needs_quotes(ident) else ident


def check_size(typed: TypedTable, max_rows: int = MAX_ROWS) -> None:
    if typed.table.n_rows > max_rows:
        raise ProgramError(f"the table has {typed.table.n_rows:,} rows; programs run on at most {max_rows:,}")
    if not typed.columns:
        raise ProgramError("the table has no columns to query")


class Sandbox:
    """This table as ``t`` in a private in-memory SQLite database that answers reads of ``t`` only.

    Numeric columns are REAL (the numbers parsed from decorated cells, NULL where a cell holds none),
    text columns TEXT compared under the ``norm`` collation. ``_r`` is the 1-based row number.
    """

    def __init__(self, typed: TypedTable, *, time_limit_s: float = TIME_LIMIT_S,
                 max_result_rows: int = MAX_RESULT_ROWS, max_rows: int = MAX_ROWS):
        check_size(typed, max_rows)
        self.time_limit_s = time_limit_s
        self.max_result_rows = max_result_rows
        self.refused: str | None = None
        self._deadline = 0.0
        self.con = con = sqlite3.connect(":memory:", check_same_thread=False)
        con.create_collation("norm", _collate)
        con.create_function("like", 2, _like, deterministic=True)
        con.create_function("like", 3, _like, deterministic=True)
        con.create_function("ev_cmp", 3, _ev_cmp, deterministic=True)
        con.create_function("ev_words", 2, _ev_words, deterministic=True)
        con.create_function("ev_starts", 2, _ev_starts, deterministic=True)
        cols = ", ".join(f'"{c.ident}" ' + ("REAL" if c.numeric else "TEXT COLLATE norm") for c in typed.columns)
        con.execute(f"CREATE TABLE {TABLE} ({ROW_ID} INTEGER PRIMARY KEY, {cols})")
        table = typed.table
        con.executemany(f"INSERT INTO {TABLE} VALUES ({', '.join('?' * (len(typed.columns) + 1))})", [
            [r] + [(typed.number(r, c.index) if not is_empty(typed.text(r, c.index)) else None) if c.numeric
                   else " ".join(typed.text(r, c.index).split()) for c in typed.columns]
            for r in range(1, table.n_rows + 1)])
        con.commit()
        # The walls, in order: no writes at all, small limits, then the authorizer and the clock.
        con.execute("PRAGMA query_only = ON")
        con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        con.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, 4 * SQL_MAX_CHARS)
        con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1_000_000)  # no string or blob grows past 1 MB
        con.setlimit(sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 64)
        con.setlimit(sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 1)
        con.set_authorizer(self._authorize)
        con.set_progress_handler(self._progress, PROGRESS_EVERY)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    def _authorize(self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None) -> int:
        if action == sqlite3.SQLITE_SELECT:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ and arg1 == TABLE and db in ("main", None):  # None: COUNT(*)
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in ALLOWED_SQLITE:
            return sqlite3.SQLITE_OK
        what = {sqlite3.SQLITE_READ: f"reading {arg1}", sqlite3.SQLITE_FUNCTION: f"the function {arg2}",
                sqlite3.SQLITE_PRAGMA: "PRAGMA", sqlite3.SQLITE_ATTACH: "ATTACH",
                sqlite3.SQLITE_RECURSIVE: "a recursive query"}.get(action, f"SQLite action {action}")
        self.refused = self.refused or what
        return sqlite3.SQLITE_DENY

    def _progress(self) -> int:
        return int(time.perf_counter() > self._deadline)

    def query(self, sql: str) -> list[tuple]:
        """Run one read-only statement; raise :class:`ProgramError` when it is refused or runs too long."""
        self.refused = None
        self._deadline = time.perf_counter() + self.time_limit_s
        try:
            rows = self.con.execute(sql).fetchmany(self.max_result_rows + 1)
        except (sqlite3.Error, sqlite3.Warning) as exc:
            if self.refused:
                raise ProgramError(f"the program was refused: {self.refused} is not allowed") from None
            if "interrupted" in str(exc):
                raise ProgramError(f"the program ran longer than {self.time_limit_s:g} s and was stopped") from None
            raise ProgramError(f"SQLite could not run the program: {exc}") from None
        if len(rows) > self.max_result_rows:
            raise ProgramError(f"the program returns more than {self.max_result_rows:,} rows; aggregate or "
                               "filter them")
        return rows


# -- the grammar --------------------------------------------------------------------------------------
def _alts(names: list[str]) -> str:
    return " | ".join(f'"{_esc(n)}"' for n in names)


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@lru_cache(maxsize=32)
def _grammar(spec: GrammarSpec, kind: Kind) -> str:
    num_cols = [sql_name(i) for i in spec.numeric]
    text_cols = [sql_name(i) for i, _ in spec.text]
    # As in the fixed operations' grammar (tools._table_grammar): "=" and "!=" filters on a text column take one
    # of its own values, so a filter always selects the rows it names; LIKE and the claim's check stay free text.
    enumerated = [(sql_name(i), values) for i, values in spec.text if values]
    free = [sql_name(i) for i, values in spec.text if not values]
    text_filters = ([f'"{_esc(c)}" " " eq " " tv{k}' for k, (c, _) in enumerate(enumerated)]
                    + (['tfree " " eq " " str'] if free else []) + (['tcol " LIKE " str'] if text_cols else []))
    num_term = ['ncol', 'agg', '"COUNT(*)"', 'num', 'subq'] if num_cols else ['"COUNT(*)"', 'num', 'subq']
    lines = []
    if kind == "claim":
        lines.append('root ::= "SELECT " value " AS value, " verdict " AS verdict FROM t" where? order?')
        lines.append('verdict ::= check (" AND " check)?')
        checks = ['nexpr " " cmp " " nexpr'] + (['tcol " " eq " " str', 'tcol " LIKE " str'] if text_cols else [])
        lines.append("check ::= " + " | ".join(checks))
    else:
        lines.append('root ::= "SELECT " value " FROM t" where? order?')
    lines += [
        "value ::= " + " | ".join(["nexpr"] + (["tcol"] if text_cols else [])),
        'nexpr ::= nterm (" " arith " " nterm)?',
        "nterm ::= " + " | ".join(num_term),
        'arith ::= "+" | "-" | "*" | "/"',
        'cmp ::= "=" | "!=" | "<" | "<=" | ">" | ">="',
        'eq ::= "=" | "!="',
        # A scalar subquery reads one value from other rows ("more than Norway"); it nests no further.
        'subq ::= "(SELECT " sterm " FROM t" swhere? order? ")"',
        "sterm ::= " + " | ".join((["ncol", "agg"] if num_cols else []) + ['"COUNT(*)"']),
        'where ::= " WHERE " pred ((" AND " | " OR ") pred){0,3}',
        'swhere ::= " WHERE " spred (" AND " spred){0,2}',
        "pred ::= " + " | ".join((['ncol " " cmp " " (num | subq)'] if num_cols else []) + text_filters),
        "spred ::= " + " | ".join((['ncol " " cmp " " num'] if num_cols else []) + text_filters),
        'order ::= " ORDER BY " ' + ("(ncol | tcol)" if num_cols and text_cols else "ncol" if num_cols else "tcol")
        + ' (" ASC" | " DESC") " LIMIT " [1-9] [0-9]?',
        'num ::= "-"? [0-9]{1,12} ("." [0-9]{1,6})?',
        # Single-quoted, '' for a quote inside; short, on one line.
        'str ::= "\'" ([^\'\\\\\\n\\r] | "\'\'"){1,' + str(VALUE_MAX_CHARS) + '} "\'"',
    ]
    if num_cols:
        lines += ['agg ::= ("SUM" | "AVG" | "MIN" | "MAX") "(" ncol ")"', "ncol ::= " + _alts(num_cols)]
    if text_cols:
        lines.append("tcol ::= " + _alts(text_cols))
    if free:
        lines.append("tfree ::= " + _alts(free))
    lines += [f"tv{k} ::= " + _alts([_sql_string(v) for v in values]) for k, (_, values) in enumerate(enumerated)]
    return "\n".join(lines) + "\n"


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def sql_grammar(typed: TypedTable, kind: Kind) -> str:
    """The xgrammar EBNF of the queries a model may write over ``typed`` (``kind``: claim or question)."""
    check_size(typed, max_rows=typed.table.n_rows)  # a grammar needs at least one column
    return _grammar(GrammarSpec.of(typed), kind)


# -- checking, rewriting and describing a query ---------------------------------------------------------
def parse_sql(sql: str) -> exp.Select:
    """One SELECT over ``t`` and nothing else, or :class:`ProgramError` saying what is wrong."""
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise ProgramError("the program is empty")
    if len(text) > SQL_MAX_CHARS:
        raise ProgramError(f"the program is longer than {SQL_MAX_CHARS} characters")
    try:
        statements = [s for s in sqlglot.parse(text, read="sqlite") if s is not None]
    except (ParseError, TokenError) as exc:
        raise ProgramError(f"the SQL does not parse: {str(exc).splitlines()[0][:160]}") from None
    if len(statements) != 1:
        raise ProgramError(f"the program must be one SELECT statement, got {len(statements)} statements")
    tree = statements[0]
    if not isinstance(tree, exp.Select):
        raise ProgramError(f"only a SELECT is allowed, not {text.split()[0].upper()[:20]}")
    for node in tree.walk():
        for kind, name in _REFUSED.items():
            if isinstance(node, kind) and not (kind is exp.Star and isinstance(node.parent, exp.Count)):
                raise ProgramError(f"{name} is not allowed: read the one table t")
        if (isinstance(node, exp.Func) and not isinstance(node, exp.Connector)  # AND/OR are Funcs to sqlglot
                and type(node).__name__ not in ALLOWED_SQLGLOT):
            name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
            raise ProgramError(f"the function {name.upper()} is not allowed; use COUNT, SUM, AVG, MIN, MAX, ABS "
                               "or ROUND")
        if isinstance(node, exp.Table) and (node.name != TABLE or node.args.get("db") or node.args.get("catalog")):
            raise ProgramError(f"the only table is t, not {node.sql(dialect='sqlite')}")
        if isinstance(node, exp.Select):
            source = node.args.get("from_") or node.args.get("from")
            if source is None or not isinstance(source.this, exp.Table) or node.args.get("joins"):
                raise ProgramError("every SELECT reads FROM t, once, with no joins")
            depth = sum(1 for a in _ancestors(node) if isinstance(a, exp.Select))
            if depth > MAX_SUBQUERY_DEPTH:
                raise ProgramError(f"subqueries nest at most {MAX_SUBQUERY_DEPTH} deep")
    return tree


def _ancestors(node: exp.Expression):
    p = node.parent
    while p is not None:
        yield p
        p = p.parent


def _own(node: exp.Expression, kind: type) -> list:
    """Nodes of ``kind`` in ``node`` outside its subqueries (a subquery has its own rows)."""
    return [n for n in node.walk(prune=lambda n: isinstance(n, exp.Subquery) and n is not node)
            if isinstance(n, kind)]


def _number_literal(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Literal) and not node.is_string:
        return node.this
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return "-" + node.this.this
    return None


def rewrite(tree: exp.Select, typed: TypedTable) -> tuple[exp.Select, list[str]]:
    """The query as it runs: comparisons mean what ``tools._cells.compare`` means (see the module)."""
    notes: list[str] = []
    idents = {c.ident: c for c in typed.columns}

    def fix(node: exp.Expression) -> exp.Expression:
        op = _CMP_NODES.get(type(node))
        if op is None:
            return node
        left, right = node.this, node.expression
        if _number_literal(left) is not None and _number_literal(right) is None:
            left, right, op = right, left, MIRRORED_OPS[op]
        literal = _number_literal(right)
        if literal is not None and _number_literal(left) is None:
            return exp.Anonymous(this="ev_cmp", expressions=[left, exp.Literal.string(op), exp.Literal.string(literal)])
        text_literal = isinstance(right, exp.Literal) and right.is_string
        if op in ("=", "!=") and text_literal and right.this.endswith("…") and len(right.this) > 1:
            # A long cell as the grammar offers it, clipped like the prompt shows it: the cells it starts.
            starts = exp.Anonymous(this="ev_starts", expressions=[left, exp.Literal.string(right.this[:-1])])
            return starts if op == "=" else exp.Not(this=starts)
        if (op == "=" and isinstance(left, exp.Column) and text_literal
                and left.name in idents and not idents[left.name].numeric):
            col = idents[left.name]
            values = typed.table.column_values(col.index)
            if not any(norm_text(v) == norm_text(right.this) for v in values) and any(
                    words_match(v, right.this) for v in values):
                notes.append(f"no {col.name} equals {right.this!r}; rows whose {col.name} contains it as words")
                return exp.Anonymous(this="ev_words", expressions=[left, right])
        return node

    return tree.transform(fix, copy=True), notes


def _display(node: exp.Expression | None, typed: TypedTable) -> str:
    """SQL with the real column names, for the user."""
    if node is None:
        return ""
    names = {c.ident: c.name for c in typed.columns}

    def real(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and n.name in names:
            return exp.var(" ".join(names[n.name].split()) or n.name)
        return n

    return node.transform(real, copy=True).sql(dialect="sqlite")


def _value_and_verdict(tree: exp.Select) -> tuple[exp.Expression, exp.Expression | None]:
    exprs = [e.this if isinstance(e, exp.Alias) else e for e in tree.expressions]
    aliased = {e.alias.lower(): e.this for e in tree.expressions if isinstance(e, exp.Alias)}
    value = aliased.get("value", exprs[0])
    verdict = aliased.get("verdict", exprs[1] if len(exprs) > 1 else None)
    return value, verdict


def describe_sql(sql: str, typed: TypedTable) -> str:
    """The query in the words of the fixed operations' programs: ``rows → what; check: …``."""
    try:
        tree = parse_sql(sql)
    except ProgramError:
        return " ".join(sql.split())
    value, verdict = _value_and_verdict(tree)
    where = tree.args.get("where")
    rows = f"rows where {_display(where.this, typed)}" if where is not None else "all rows"
    order = tree.args.get("order")
    if order is not None:
        limit = tree.args.get("limit")
        rows += f" sorted by {_display(order, typed).removeprefix('ORDER BY ')}"
        rows += f", first {_display(limit, typed).removeprefix('LIMIT ')}" if limit is not None else ""
    text = f"{rows} → {_display(value, typed)}"
    return text + (f"; check: {_display(verdict, typed)}" if verdict is not None else "")


# -- running ------------------------------------------------------------------------------------------
@dataclass
class _Scope:
    """One SELECT (the query or a subquery): the rows it read and decided, and the columns it read."""

    matched: list[int]
    decisive: list[int]
    filter_cols: list[int]
    read_cols: list[int]
    value: Any = None
    notes: list[str] = field(default_factory=list)


def _col_indices(nodes: list[exp.Column], typed: TypedTable) -> list[int]:
    index = {c.ident: c.index for c in typed.columns}
    return list(dict.fromkeys(index[n.name] for n in nodes if n.name in index))


def _rows_where(box: Sandbox, select: exp.Select, also: exp.Expression | None = None) -> list[int]:
    """The rows ``select``'s WHERE (and ``also``) keeps, by re-running it for their row numbers."""
    where = select.args.get("where")
    conditions = [c for c in (where.this.copy() if where is not None else None, also) if c is not None]
    probe = exp.select(ROW_ID).from_(TABLE)
    if conditions:
        probe = probe.where(exp.and_(*conditions))
    return [r for (r,) in box.query(probe.sql(dialect="sqlite"))]


def _aggregate_scope(box: Sandbox, select: exp.Select, value: Any) -> _Scope:
    """An aggregate's decisive rows: those holding a MIN/MAX it returned, else every row it read."""
    matched = decisive = _rows_where(box, select)
    for agg in _own(select, exp.AggFunc):
        if isinstance(agg, (exp.Min, exp.Max)) and isinstance(agg.this, exp.Column):
            best = exp.select(agg.copy()).from_(TABLE)
            if select.args.get("where") is not None:
                best = best.where(select.args["where"].this.copy())
            decisive = _rows_where(box, select, exp.EQ(this=agg.this.copy(), expression=exp.Subquery(this=best)))
            break
    return _Scope(matched=matched, decisive=decisive, filter_cols=[], read_cols=[], value=value)


def _scope_columns(select: exp.Select, typed: TypedTable) -> tuple[list[int], list[int]]:
    """The columns a SELECT filters on (WHERE) and the ones it reads (its expressions and ORDER BY)."""
    where = select.args.get("where")
    filter_cols = _col_indices(_own(where, exp.Column), typed) if where is not None else []
    read: list[exp.Column] = []
    for e in select.expressions:
        read += _own(e, exp.Column)
    order = select.args.get("order")
    if order is not None:
        read += _own(order, exp.Column)
    return filter_cols, [c for c in _col_indices(read, typed) if c not in filter_cols]


def _is_aggregate(select: exp.Select) -> bool:
    return any(_own(e, exp.AggFunc) for e in select.expressions)


def _subquery_scopes(box: Sandbox, run: exp.Select, typed: TypedTable) -> list[tuple[exp.Select, _Scope]]:
    out = []
    for sub in _own(run, exp.Subquery):
        if sub is run:
            continue
        inner = sub.this
        rows = box.query(inner.sql(dialect="sqlite"))
        value = rows[0][0] if rows else None
        if _is_aggregate(inner):
            scope = _aggregate_scope(box, inner, value)
        else:
            with_row = inner.select(exp.column(ROW_ID), append=True, copy=True)
            scope = _Scope(matched=_rows_where(box, inner),
                           decisive=[r[-1] for r in box.query(with_row.sql(dialect="sqlite"))][:1],
                           filter_cols=[], read_cols=[], value=value)
        scope.filter_cols, scope.read_cols = _scope_columns(inner, typed)
        out.append((inner, scope))
    return out


def _cells(scope: _Scope, typed: TypedTable, label_too: bool) -> list[tuple[int, int]]:
    cols = scope.filter_cols + scope.read_cols
    cells = [(r, c) for r in scope.decisive for c in cols]
    label = typed.label_col
    if label_too and label and label not in cols and len(scope.decisive) <= 3:
        cells = [(r, label) for r in scope.decisive] + cells  # name the row the number belongs to
    return cells


def execute_sql(sql: str, typed: TypedTable, kind: Kind = "claim", *, box: Sandbox | None = None,
                time_limit_s: float = TIME_LIMIT_S, max_rows: int = MAX_ROWS,
                max_result_rows: int = MAX_RESULT_ROWS) -> Execution:
    """Check, rewrite and run ``sql`` over ``typed``; the result, its verdict and the cells that decided it.

    ``box``: a :class:`Sandbox` of ``typed`` to reuse (it is read-only, so the samples of one request share
    one copy of the table); by default one is made for this query, with ``time_limit_s`` and ``max_result_rows``.
    """
    table = typed.table
    check_size(typed, max_rows)
    written = parse_sql(sql)
    value_node, verdict_node = _value_and_verdict(written)
    if kind == "claim" and verdict_node is None:
        raise ProgramError("a claim's program returns the value AS value and the check AS verdict")
    run, notes = rewrite(written, typed)
    aggregate = _is_aggregate(run)
    own = box is None
    box = box or Sandbox(typed, time_limit_s=time_limit_s, max_result_rows=max_result_rows)
    try:
        if aggregate:
            rows = box.query(run.sql(dialect="sqlite"))
            main = _aggregate_scope(box, run, rows[0][0] if rows else None)
        else:
            with_row = run.select(exp.column(ROW_ID), append=True, copy=True)
            rows = box.query(with_row.sql(dialect="sqlite"))
            main = _Scope(matched=_rows_where(box, run), decisive=[r[-1] for r in rows],
                          filter_cols=[], read_cols=[])
        main.filter_cols, main.read_cols = _scope_columns(run, typed)
        subs = _subquery_scopes(box, run, typed)
    finally:
        if own:
            box.close()
    where = written.args.get("where")
    steps = [f"{_display(where.this, typed)}: {len(main.matched)} of {table.n_rows} rows"] if where is not None else []
    steps += notes
    for inner, scope in subs:
        steps.append(f"({_display(inner, typed)}) = {format_value(_plain(scope.value))}")
    if not rows or (aggregate and not main.matched and rows[0][0] is None):
        raise ProgramError("no row matches the filters: " + ("; ".join(steps) or "the table is empty")
                           + " (check the values against the example values)")
    values = [_plain(r[0]) for r in rows]
    if all(v is None for v in values):
        raise ProgramError(f"{_display(value_node, typed)} is empty in the selected rows (no numbers there)")
    if isinstance(value_node, exp.Column) and not aggregate:
        # A cell as the table shows it ("$3.5m", "1,012"), not the number it was read as.
        c = next(iter(_col_indices([value_node], typed)), None)
        values = [" ".join(typed.text(r, c).split()) for r in main.decisive] if c else values
    result: Any = values[0] if len(values) == 1 else values
    result_text = format_value(result)
    order = written.args.get("order")
    if order is not None and not aggregate:
        keys = [k.this for k in order.expressions]
        if keys and isinstance(keys[0], exp.Column) and keys[0].name != getattr(value_node, "name", None):
            c = next(iter(_col_indices([keys[0]], typed)), None)
            if c:
                shown = [format_value(typed.number(r, c)) if typed.columns[c - 1].numeric
                         else typed.text(r, c) for r in main.decisive]
                result_text += f" ({', '.join(shown)})"
    truth: bool | None = None
    check_text = ""
    if kind == "claim":
        verdicts = [r[1] for r in rows]
        if all(v is None for v in verdicts):
            raise ProgramError(f"the check {_display(verdict_node, typed)} compares only empty cells")
        # A row whose cell is empty ("n/a") does not meet the check, as with the fixed operations.
        truth = all(bool(v) for v in verdicts)
        check_text = _check_text(value_node, verdict_node, subs, typed)
    cells = _cells(main, typed, label_too=True)
    for _, scope in subs:
        cells += _cells(scope, typed, label_too=True)
    cells = list(dict.fromkeys(cells))[:MAX_CELLS]
    return Execution(selected=main.matched, result=result, result_text=result_text, decisive_rows=main.decisive,
                     cells=cells, truth=truth, check_text=check_text, steps=steps)


def _plain(v: Any) -> Any:
    """SQLite's value as the fixed operations hold it: numbers as floats, the rest as text."""
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return float(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _check_text(value: exp.Expression, verdict: exp.Expression | None, subs: list, typed: TypedTable) -> str:
    """What the claim needs of the value, with the values its subqueries computed: ``> 39 (Medals of …)``."""
    if verdict is None:
        return ""
    computed = {inner.sql(): scope.value for inner, scope in subs}

    def side(node: exp.Expression) -> str:
        if isinstance(node, exp.Subquery) and node.this.sql() in computed:
            return f"{format_value(_plain(computed[node.this.sql()]))} ({_display(node.this, typed)})"
        return _display(node, typed)

    op = _CMP_NODES.get(type(verdict))
    if op is not None and verdict.this == value:
        return f"{op} {side(verdict.expression)}"
    return f"to meet {_display(verdict, typed)}"
