"""Loaders that turn mirrored KG sources into a validated :class:`GraphData` and store it.

Every loader reads only from the configured mirror folders (``settings.kb_mirror_dir`` for
Hetionet and ConceptNet, ``settings.eval_data_dir`` for the MedQA disease database) or from a
path the user names (CSV). Each builds the whole graph in memory first and then calls
``KGStore.replace_graph``, which writes in one transaction: a malformed source raises
:class:`KGLoadError` and nothing is written.
"""

from __future__ import annotations

import csv
import gzip
import json
from dataclasses import dataclass
from pathlib import Path

from kb.kg_store import GraphData, KGLoadError, KGStore, Relation

# -- Hetionet ---------------------------------------------------------------------------------
# metaedge -> (template, license). Direction in the files is source -> target as the abbreviation
# reads (CtD: Compound treats Disease). Licenses from hetionet/definitions.json and SOURCE-LICENSES.md.
HETIONET_METAEDGES: dict[str, tuple[str, str]] = {
    "AdG": ("downregulates", "Bgee (no license stated)"),
    "AeG": ("expresses", "Bgee/TISSUES (CC BY 4.0 / no license)"),
    "AuG": ("upregulates", "Bgee (no license stated)"),
    "CbG": ("binds", "BindingDB CC BY 3.0/CC BY-SA 3.0; DrugBank; DrugCentral CC BY 4.0"),
    "CcSE": ("causes", "SIDER 4.1 CC BY-NC-SA 4.0 (non-commercial)"),
    "CdG": ("downregulates", "LINCS L1000 (custom)"),
    "CpD": ("palliates", "PharmacotherapyDB CC0"),
    "CrC": ("resembles", "Hetionet CC0"),
    "CtD": ("treats", "PharmacotherapyDB CC0"),
    "CuG": ("upregulates", "LINCS L1000 (custom)"),
    "DaG": ("associates with", "per source (GWAS Catalog, DISEASES CC BY 4.0, DisGeNET ODbL, DOAF)"),
    "DdG": ("downregulates", "STARGEO (no license stated)"),
    "DlA": ("localizes to", "MEDLINE co-occurrence (public domain)"),
    "DpS": ("presents", "MEDLINE co-occurrence (public domain)"),
    "DrD": ("resembles", "MEDLINE co-occurrence (public domain)"),
    "DuG": ("upregulates", "STARGEO (no license stated)"),
    "GcG": ("covaries with", "Evolutionary Rate Covariation (no license stated)"),
    "GiG": ("interacts with", "interactome sources (no license stated)"),
    "GpBP": ("participates in", "Gene Ontology CC BY 4.0"),
    "GpCC": ("participates in", "Gene Ontology CC BY 4.0"),
    "GpMF": ("participates in", "Gene Ontology CC BY 4.0"),
    "GpPW": ("participates in", "WikiPathways/Reactome/PID (mixed)"),
    "Gr>G": ("regulates", "LINCS L1000 (custom)"),
    "PCiC": ("includes", "DrugCentral CC BY 4.0"),
}
HETIONET_NONCOMMERCIAL = {"CcSE"}
# PharmacotherapyDB (hetionet/extra, CC0): its consensus categories as Hetionet's metaedges.
PHARMACOTHERAPYDB_FILE = "pharmacotherapydb-indications.tsv"
PHARMACOTHERAPYDB_CATEGORIES = ("DM", "SYM", "NOT")
PHARMACOTHERAPYDB_METAEDGE = {"DM": "CtD", "SYM": "CpD"}
HETIONET_NODE_LICENSES = {
    "Disease": "Disease Ontology CC BY 3.0",
    "Compound": "DrugBank 4.2 (commercial use needs permission)",
    "Symptom": "MeSH (public domain)",
    "Side Effect": "SIDER 4.1 CC BY-NC-SA 4.0 (non-commercial)",
    "Gene": "Entrez Gene (public domain)",
    "Anatomy": "Uberon CC BY 3.0",
    "Biological Process": "Gene Ontology CC BY 4.0",
    "Cellular Component": "Gene Ontology CC BY 4.0",
    "Molecular Function": "Gene Ontology CC BY 4.0",
    "Pathway": "WikiPathways/Reactome/PID (mixed)",
    "Pharmacologic Class": "DrugCentral CC BY 4.0",
}

# -- ConceptNet (CN-100K) ---------------------------------------------------------------------
CONCEPTNET_TEMPLATES = {
    "AtLocation": "is at location of", "UsedFor": "is used for", "IsA": "is a kind of",
    "CapableOf": "is capable of", "HasPrerequisite": "has prerequisite", "HasProperty": "has property",
    "Causes": "causes", "HasA": "has a", "MotivatedByGoal": "is motivated by the goal",
    "Desires": "desires", "CausesDesire": "causes the desire to", "PartOf": "is part of",
    "ReceivesAction": "receives action", "NotDesires": "does not desire", "MadeOf": "is made of",
    "NotCapableOf": "is not capable of", "DefinedAs": "is defined as",
    "HasFirstSubevent": "has first subevent", "HasLastSubevent": "has last subevent",
    "NotHasProperty": "does not have property", "NotIsA": "is not a kind of", "RelatedTo": "is related to",
    "CreatedBy": "is created by", "NotHasA": "does not have", "SymbolOf": "is a symbol of",
    "NotMadeOf": "is not made of", "InstanceOf": "is an instance of", "HasSubevent": "has subevent",
    "InheritsFrom": "inherits from", "LocatedNear": "is located near",
    "HasPainIntensity": "has pain intensity", "HasPainCharacter": "has pain character",
    "DesireOf": "is a desire of", "LocationOfAction": "is the location of the action",
}
CONCEPTNET_LICENSE = "CC BY-SA (ConceptNet 5 / Open Mind Common Sense)"

# -- MedQA disease database (QA-GNN's DDB) -------------------------------------------------------
# relation code -> relation name, from qagnn utils_biomed/preprocess_medqa_usmle.ipynb (relas_dict).
DDB_RELATIONS = {
    "0": "belongs_to_the_category_of", "1": "is_a_category", "2": "may_cause", "3": "is_a_subtype_of",
    "4": "is_a_risk_factor_of", "6": "is_associated_with", "10": "may_contraindicate",
    "12": "interacts_with", "16": "belongs_to_the_drug_family_of", "17": "belongs_to_drug_super-family",
    "18": "is_a_vector_for", "20": "may_be_allelic_with", "26": "see_also", "30": "is_an_ingradient_of",
    "233": "may_treat",
}
DDB_TEMPLATES = {
    "belongs_to_the_category_of": "belongs to the category of", "is_a_category": "is a category of",
    "may_cause": "may cause", "is_a_subtype_of": "is a subtype of",
    "is_a_risk_factor_of": "is a risk factor for", "is_associated_with": "is associated with",
    "may_contraindicate": "may contraindicate", "interacts_with": "interacts with",
    "belongs_to_the_drug_family_of": "belongs to the drug family of",
    "belongs_to_drug_super-family": "belongs to the drug super-family of",
    "is_a_vector_for": "is a vector for", "may_be_allelic_with": "may be allelic with",
    "see_also": "is related to", "is_an_ingradient_of": "is an ingredient of", "may_treat": "may treat",
}
DDB_LICENSE = "MIT (QA-GNN release of the Disease Database KG)"

# Loader names accepted by ``evidentia kb kg load``.
SOURCES = ("hetionet", "conceptnet", "medqa-ddb", "csv")


def _require_dir(root: Path | None, sub: str, setting: str) -> Path:
    if root is None:
        raise KGLoadError(f"Set EVIDENTIA_{setting.upper()} to the folder that holds {sub}/.")
    path = Path(root) / sub
    if not path.is_dir():
        raise KGLoadError(f"{path} does not exist (check EVIDENTIA_{setting.upper()}).")
    return path


def read_hetionet(mirror_dir: Path | None, *, allow_noncommercial: bool = False) -> GraphData:
    """Hetionet v1.0 from ``<kb_mirror_dir>/hetionet``: nodes.tsv, edges-5k.sif.gz, extra/*.csv and
    PharmacotherapyDB's indications (extra/pharmacotherapydb-indications.tsv) with their provenance.

    Edges are de-duplicated across files. Non-commercial edge types (CcSE, SIDER) and the Side
    Effect nodes are skipped unless ``allow_noncommercial``. Nodes with no loaded edge are left out.
    DaG edges get their per-row license from DaG-association.tsv.
    """
    root = _require_dir(mirror_dir, "hetionet", "kb_mirror_dir")
    data = GraphData(source="hetionet", license="CC0 (Hetionet); per-edge licenses of the sources",
                     description="Hetionet v1.0 (edges-5k sample + full disease/compound edge sets)")
    nodes: dict[str, tuple[str, str]] = {}
    with open(root / "nodes.tsv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            nodes[row["id"]] = (row["name"], row["kind"])
    dag_license: dict[tuple[str, str], str] = {}
    dag_path = root / "DaG-association.tsv"
    if dag_path.exists():
        with open(dag_path, encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                lic = (row.get("license") or "").strip() or f"sources: {row.get('sources', '')}"
                dag_license[(f"Disease::{row['doid_id']}", f"Gene::{row['entrez_gene_id']}")] = lic

    def edge_rows():
        with gzip.open(root / "edges-5k.sif.gz", "rt", encoding="utf-8") as fh:
            yield from csv.DictReader(fh, delimiter="\t")
        for extra in sorted((root / "extra").glob("*.csv")):
            with open(extra, encoding="utf-8", newline="") as fh:
                yield from csv.DictReader(fh)

    seen: set[tuple[str, str, str]] = set()
    skipped_nc = 0
    for row in edge_rows():
        h, meta, t = row["source"], row["metaedge"], row["target"]
        if meta not in HETIONET_METAEDGES:
            raise KGLoadError(f"hetionet: unknown metaedge {meta!r}")
        if meta in HETIONET_NONCOMMERCIAL and not allow_noncommercial:
            skipped_nc += 1
            continue
        if h not in nodes or t not in nodes:
            raise KGLoadError(f"hetionet: edge {h} {meta} {t} refers to a node missing from nodes.tsv")
        if (h, meta, t) in seen:
            continue
        seen.add((h, meta, t))
        lic = dag_license.get((h, t), HETIONET_METAEDGES[meta][1]) if meta == "DaG" else HETIONET_METAEDGES[meta][1]
        data.edges.append((h, meta, t, lic))
    indications = root / "extra" / PHARMACOTHERAPYDB_FILE
    if indications.exists():
        _add_indications(data, nodes, seen, read_pharmacotherapydb(indications))
    used = {h for h, *_ in data.edges} | {t for _, _, t, _ in data.edges}
    for nid, (name, kind) in nodes.items():
        if nid in used:
            data.nodes.append((nid, name, kind, HETIONET_NODE_LICENSES.get(kind, "CC0")))
    present = {m for _, m, _, _ in data.edges}
    data.relations = [Relation(m, tpl, "hetionet", lic) for m, (tpl, lic) in HETIONET_METAEDGES.items()
                      if m in present]
    if skipped_nc:
        data.skipped["noncommercial_CcSE"] = skipped_nc
    return data


@dataclass
class Indication:
    """One row of PharmacotherapyDB's ``indications.tsv``."""

    doid_id: str
    drugbank_id: str
    disease: str
    drug: str
    category: str  # DM (disease-modifying), SYM (symptomatic) or NOT (not an indication)
    n_curators: int
    n_resources: int

    def provenance(self) -> str:
        kind = "disease-modifying" if self.category == "DM" else "symptomatic"
        return (f"PharmacotherapyDB v1.0 (CC0): {kind} indication ({self.category}); {self.n_curators} of 3 "
                f"curators agreed; listed by {self.n_resources} of 4 resources")


def read_pharmacotherapydb(path: Path) -> list[Indication]:
    """PharmacotherapyDB v1.0 ``indications.tsv`` (dhimmel/indications; SOURCES.md §1), validated."""
    need = ("doid_id", "drugbank_id", "disease", "drug", "category", "n_curators", "n_resources")
    out: list[Indication] = []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        missing = [c for c in need if c not in (reader.fieldnames or [])]
        if missing:
            raise KGLoadError(f"{path.name}: missing columns {', '.join(missing)}")
        for row in reader:
            line = reader.line_num
            category = (row["category"] or "").strip()
            if category not in PHARMACOTHERAPYDB_CATEGORIES:
                raise KGLoadError(f"{path.name}, line {line}: unknown category {category!r} (DM, SYM or NOT)")
            try:
                curators, resources = int(row["n_curators"]), int(row["n_resources"])
            except (TypeError, ValueError) as exc:
                raise KGLoadError(f"{path.name}, line {line}: n_curators and n_resources must be numbers") from exc
            fields = [(row[c] or "").strip() for c in need[:4]]
            if not all(fields):
                raise KGLoadError(f"{path.name}, line {line}: ids and names must be non-empty")
            out.append(Indication(*fields, category, curators, resources))
    return out


def _add_indications(data: GraphData, nodes: dict[str, tuple[str, str]], seen: set[tuple[str, str, str]],
                     indications: list[Indication]) -> None:
    """PharmacotherapyDB's DM and SYM pairs as CtD (treats) and CpD (palliates) edges, with provenance.

    Hetionet built CtD and CpD from this very file (definitions.json: CtD "a disease-modifying
    indication", CpD "a symptomatic indication"), so the pairs are usually present already; what the
    file adds is each pair's provenance (category, curator agreement, resources). NOT rows (curated as
    not an indication) are counted as skipped.
    """
    not_indications = 0
    for ind in indications:
        if ind.category == "NOT":
            not_indications += 1
            continue
        head, tail = f"Compound::{ind.drugbank_id}", f"Disease::{ind.doid_id}"
        # A drug or disease absent from nodes.tsv still gets a node, named as the file names it.
        nodes.setdefault(head, (ind.drug, "Compound"))
        nodes.setdefault(tail, (ind.disease, "Disease"))
        meta = PHARMACOTHERAPYDB_METAEDGE[ind.category]
        if (head, meta, tail) not in seen:
            seen.add((head, meta, tail))
            data.edges.append((head, meta, tail, HETIONET_METAEDGES[meta][1]))
        data.provenance[(head, meta, tail)] = ind.provenance()
    if not_indications:
        data.skipped["pharmacotherapydb_NOT"] = not_indications


def read_conceptnet(mirror_dir: Path | None) -> GraphData:
    """ConceptNet CN-100K from ``<kb_mirror_dir>/conceptnet-cn100k/train100k.txt.gz``."""
    root = _require_dir(mirror_dir, "conceptnet-cn100k", "kb_mirror_dir")
    data = GraphData(source="conceptnet", license=CONCEPTNET_LICENSE,
                     description="ConceptNet CN-100K (Li et al. 2016) training triples")
    rel_case = {k.lower(): k for k in CONCEPTNET_TEMPLATES}
    names: dict[str, None] = {}
    seen: set[tuple[str, str, str]] = set()
    with gzip.open(root / "train100k.txt.gz", "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or not all(p.strip() for p in parts[:3]):
                raise KGLoadError(f"conceptnet: line {lineno} is not 'relation<TAB>head<TAB>tail'")
            rel, h, t = rel_case.get(parts[0].lower(), parts[0]), parts[1].strip(), parts[2].strip()
            if rel not in CONCEPTNET_TEMPLATES:
                raise KGLoadError(f"conceptnet: line {lineno}: unknown relation {parts[0]!r}")
            if (h, rel, t) in seen:
                continue
            seen.add((h, rel, t))
            names.setdefault(h)
            names.setdefault(t)
            data.edges.append((h, rel, t, CONCEPTNET_LICENSE))
    data.nodes = [(n, n, "concept", CONCEPTNET_LICENSE) for n in names]
    present = {r for _, r, _, _ in data.edges}
    data.relations = [Relation(r, tpl, "conceptnet") for r, tpl in CONCEPTNET_TEMPLATES.items() if r in present]
    return data


def read_medqa_ddb(eval_data_dir: Path | None) -> GraphData:
    """The Disease Database KG from ``<eval_data_dir>/medqa/kg_ddb`` (names, relations; 15 types)."""
    root = _require_dir(eval_data_dir, "medqa/kg_ddb", "eval_data_dir")
    data = GraphData(source="medqa-ddb", license=DDB_LICENSE,
                     description="Disease Database KG used by QA-GNN for MedQA-USMLE")
    names = json.loads((root / "ddb_names.json").read_text(encoding="utf-8"))
    preferred: dict[str, str] = {}
    aliases: list[tuple[str, str]] = []
    for name, (ptr, is_pref) in sorted(names.items()):
        aliases.append((ptr, name))
        if is_pref == "1":
            preferred[ptr] = name
        else:
            preferred.setdefault(ptr, name)  # replaced when the preferred name comes along
    relas = json.loads((root / "ddb_relas.json").read_text(encoding="utf-8"))
    seen: set[tuple[str, str, str]] = set()
    for key, triple in relas.items():
        if len(triple) != 3:
            raise KGLoadError(f"medqa-ddb: relation {key} is not [subject, object, code]")
        h, t, code = (str(x) for x in triple)
        rel = DDB_RELATIONS.get(code)
        if rel is None:
            raise KGLoadError(f"medqa-ddb: relation {key} has an unknown code {code!r}")
        if h not in preferred or t not in preferred:
            continue  # a pointer with no name cannot be shown or linked
        if (h, rel, t) not in seen:
            seen.add((h, rel, t))
            data.edges.append((h, rel, t, DDB_LICENSE))
    data.nodes = [(ptr, name, "concept", DDB_LICENSE) for ptr, name in sorted(preferred.items(), key=lambda x: int(x[0]) if x[0].isdigit() else 0)]
    data.aliases = aliases
    present = {r for _, r, _, _ in data.edges}
    data.relations = [Relation(r, DDB_TEMPLATES[r], "medqa-ddb") for r in DDB_RELATIONS.values() if r in present]
    return data


def read_csv_triples(path: Path, *, name: str = "user", license: str = "user-provided") -> GraphData:
    """User triples from a CSV with a header ``head,relation,tail`` (extra columns are ignored).

    Every row must have a non-empty head, relation and tail; the first bad row stops the load
    with its line number. Relation templates: the relation with ``_`` read as spaces.
    """
    path = Path(path)
    if not path.is_file():
        raise KGLoadError(f"{path} is not a file.")
    data = GraphData(source=name, license=license, description=f"user triples from {path.name}")
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            header = [c.strip().lower() for c in next(reader, [])]
            missing = [c for c in ("head", "relation", "tail") if c not in header]
            if missing:
                raise KGLoadError(f"{path.name}: the header must name the columns head, relation, tail "
                                  f"(missing: {', '.join(missing)}).")
            hi, ri, ti = header.index("head"), header.index("relation"), header.index("tail")
            names: dict[str, None] = {}
            relations: dict[str, None] = {}
            for row in reader:
                lineno = reader.line_num
                if not any(c.strip() for c in row):
                    continue
                if len(row) != len(header):
                    raise KGLoadError(f"{path.name}, line {lineno}: expected {len(header)} columns, "
                                      f"found {len(row)}.")
                h, r, t = row[hi].strip(), row[ri].strip(), row[ti].strip()
                if not (h and r and t):
                    raise KGLoadError(f"{path.name}, line {lineno}: head, relation and tail must all be "
                                      f"non-empty.")
                names.setdefault(h)
                names.setdefault(t)
                relations.setdefault(r)
                data.edges.append((h, r, t, license))
    except UnicodeDecodeError as exc:
        raise KGLoadError(f"{path.name} is not UTF-8 text ({exc.reason}).") from exc
    except csv.Error as exc:
        raise KGLoadError(f"{path.name}: not valid CSV ({exc}).") from exc
    if not data.edges:
        raise KGLoadError(f"{path.name}: no triples found.")
    data.nodes = [(n, n, "entity", license) for n in names]
    data.relations = [Relation(r, _template_for(r), name) for r in relations]
    return data


def _template_for(relation: str) -> str:
    known = {**CONCEPTNET_TEMPLATES, **DDB_TEMPLATES,
             **{k: v[0] for k, v in HETIONET_METAEDGES.items()}}
    return known.get(relation, relation.replace("_", " ").strip())


def load_source(store: KGStore, name: str, settings, path: Path | None = None,
                graph_name: str | None = None) -> dict[str, int]:
    """Load one source by loader name into ``store``; return the counts."""
    if name == "hetionet":
        data = read_hetionet(settings.kb_mirror_dir, allow_noncommercial=settings.kg_allow_noncommercial)
    elif name == "conceptnet":
        data = read_conceptnet(settings.kb_mirror_dir)
    elif name == "medqa-ddb":
        data = read_medqa_ddb(settings.eval_data_dir)
    elif name == "csv":
        if path is None:
            raise KGLoadError("kb kg load csv needs a PATH to a CSV file with head,relation,tail columns.")
        data = read_csv_triples(path, name=graph_name or "user")
    else:
        raise KGLoadError(f"Unknown KG source {name!r}; choose one of {', '.join(SOURCES)}.")
    if graph_name and name != "csv":
        data.source = graph_name
    return store.replace_graph(data)
