"""The IndustryBench taxonomy (paper Appendix B), installed on every new benchmark.

Codes are stable identifiers used by import files, prompts and other tools; names are
the paper's (Tables 13 and 14), which the public dataset's `capability` /
`industry_primary` columns contain. Aliases are other names a file may use for a
label: Assay's earlier names and the Chinese ones. `fold_label` says when two ways of
writing a label are the same.
"""

import re
import unicodedata
from typing import NamedTuple


class LabelSpec(NamedTuple):
    code: str
    name: str
    definition: str
    aliases: tuple[str, ...] = ()


_SEPARATORS = re.compile(r"[\s_&＆]+")


def fold_label(text: str) -> str:
    """The form labels are matched in: Unicode-normalised (full-width letters),
    case-folded, `_` and `&` read as spaces, the word "and" dropped, whitespace
    collapsed. So "Process & Principles", "process and principles" and
    "PROCESS_PRINCIPLES" all read "process principles"; "Chemicals & Coatings"
    and "Chemical & Coatings" stay different (an alias joins them)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(word for word in _SEPARATORS.split(text) if word and word != "and")


class DimensionSpec(NamedTuple):
    code: str
    name: str
    labels: tuple[LabelSpec, ...]


CAPABILITY = DimensionSpec(
    "capability",
    "Capability",
    (
        LabelSpec(
            "selection_substitution",
            "Selection & Substitution",
            "Model selection, substitution recommendations and performance comparison "
            "between products, grades or materials for a stated application.",
            ("选型与替代",),
        ),
        LabelSpec(
            "standards_terminology",
            "Standards & Terminology",
            "Knowing what a standard specifies, its identifiers, scope, designations, "
            "markings and the precise meaning of technical terms.",
            ("标准与术语",),
        ),
        LabelSpec(
            "process_principles",
            "Process Principles",
            "Manufacturing, installation and operating processes and the physical or "
            "chemical principles behind them.",
            ("Process & Principles", "工艺原理"),
        ),
        LabelSpec(
            "safety_compliance",
            "Safety & Compliance",
            "Safety requirements, hazardous-area rules, protective measures and "
            "regulatory compliance obligations.",
            ("安全与合规",),
        ),
        LabelSpec(
            "quality_metrology",
            "Quality & Metrology",
            "Inspection, testing methods, tolerances, sampling and measurement, and "
            "acceptance criteria.",
            ("质量与计量",),
        ),
        LabelSpec(
            "fault_diagnosis",
            "Fault Diagnosis",
            "Identifying causes of failures, defects or abnormal behaviour and the "
            "corrective actions.",
            ("故障诊断",),
        ),
        LabelSpec(
            "engineering_calculation",
            "Engineering Calculation",
            "Quantitative problems: sizing, load, capacity, conversion and rating "
            "calculations with units and conditions.",
            ("工程计算",),
        ),
    ),
)

INDUSTRY = DimensionSpec(
    "industry",
    "Industry",
    (
        LabelSpec(
            "machinery_hardware",
            "Machinery & Hardware",
            "Fasteners, bearings, transmission parts, machine tools, general "
            "mechanical components and hardware.",
            ("机械与五金",),
        ),
        LabelSpec(
            "chemical_coatings",
            "Chemical & Coatings",
            "Industrial chemicals, paints and coatings, adhesives, plastics and rubber "
            "compounds.",
            ("Chemicals & Coatings", "化工与涂料"),
        ),
        LabelSpec(
            "electronics_sensors",
            "Electronics & Sensors",
            "Electronic components, instrumentation, sensors, transmitters and "
            "control electronics.",
            ("电子与传感器",),
        ),
        LabelSpec(
            "electrical_power",
            "Electrical & Power",
            "Cables, switchgear, motors, transformers, low-voltage apparatus and "
            "power distribution.",
            ("电气与电力",),
        ),
        LabelSpec(
            "cross_industry",
            "Cross-Industry",
            "General engineering knowledge that applies across several industries "
            "(units, drawings, general quality systems).",
            ("Cross-industry", "跨行业"),
        ),
        LabelSpec(
            "metallurgy_mining",
            "Metallurgy & Mining",
            "Steels and non-ferrous metals, heat treatment, castings, mining "
            "equipment and mineral processing.",
            ("冶金与矿业",),
        ),
        LabelSpec(
            "energy_storage",
            "Energy & Storage",
            "Batteries, cells, energy storage systems, charging and related "
            "safety requirements.",
            ("Energy Storage", "能源与储能"),
        ),
        LabelSpec(
            "security_fire_safety",
            "Security & Fire Safety",
            "Fire detection and suppression, explosion protection, personal "
            "protective equipment and security systems.",
            ("安防与消防",),
        ),
        LabelSpec(
            "packaging_printing",
            "Packaging & Printing",
            "Packaging materials and containers, printing processes, inks and "
            "labelling.",
            ("包装与印刷",),
        ),
        LabelSpec(
            "textile_leather",
            "Textile & Leather",
            "Fibres, fabrics, technical textiles, leather processing and their test "
            "methods.",
            ("纺织与皮革",),
        ),
    ),
)

DEFAULT_TAXONOMY: tuple[DimensionSpec, ...] = (CAPABILITY, INDUSTRY)

LANGUAGE_NAMES = {
    "zh": "中文",
    "en": "English",
    "ru": "Русский",
    "vi": "Tiếng Việt",
}

# Language names in English: what prompts and the managers' run forms say.
ENGLISH_LANGUAGE_NAMES = {
    "zh": "Chinese",
    "en": "English",
    "ru": "Russian",
    "vi": "Vietnamese",
}


def english_language_name(code: str) -> str:
    return ENGLISH_LANGUAGE_NAMES.get(code, code)
