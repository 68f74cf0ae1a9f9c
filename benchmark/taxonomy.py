"""The IndustryBench taxonomy (paper Appendix B), installed on every new benchmark.

Codes are stable identifiers used by import files, prompts and other tools; names are
what the public dataset's `capability` / `industry_primary` columns contain.
"""

from typing import NamedTuple


class LabelSpec(NamedTuple):
    code: str
    name: str
    definition: str


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
        ),
        LabelSpec(
            "standards_terminology",
            "Standards & Terminology",
            "Knowing what a standard specifies, its identifiers, scope, designations, "
            "markings and the precise meaning of technical terms.",
        ),
        LabelSpec(
            "process_principles",
            "Process & Principles",
            "Manufacturing, installation and operating processes and the physical or "
            "chemical principles behind them.",
        ),
        LabelSpec(
            "safety_compliance",
            "Safety & Compliance",
            "Safety requirements, hazardous-area rules, protective measures and "
            "regulatory compliance obligations.",
        ),
        LabelSpec(
            "quality_metrology",
            "Quality & Metrology",
            "Inspection, testing methods, tolerances, sampling and measurement, and "
            "acceptance criteria.",
        ),
        LabelSpec(
            "fault_diagnosis",
            "Fault Diagnosis",
            "Identifying causes of failures, defects or abnormal behaviour and the "
            "corrective actions.",
        ),
        LabelSpec(
            "engineering_calculation",
            "Engineering Calculation",
            "Quantitative problems: sizing, load, capacity, conversion and rating "
            "calculations with units and conditions.",
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
        ),
        LabelSpec(
            "chemical_coatings",
            "Chemicals & Coatings",
            "Industrial chemicals, paints and coatings, adhesives, plastics and rubber "
            "compounds.",
        ),
        LabelSpec(
            "electronics_sensors",
            "Electronics & Sensors",
            "Electronic components, instrumentation, sensors, transmitters and "
            "control electronics.",
        ),
        LabelSpec(
            "electrical_power",
            "Electrical & Power",
            "Cables, switchgear, motors, transformers, low-voltage apparatus and "
            "power distribution.",
        ),
        LabelSpec(
            "cross_industry",
            "Cross-industry",
            "General engineering knowledge that applies across several industries "
            "(units, drawings, general quality systems).",
        ),
        LabelSpec(
            "metallurgy_mining",
            "Metallurgy & Mining",
            "Steels and non-ferrous metals, heat treatment, castings, mining "
            "equipment and mineral processing.",
        ),
        LabelSpec(
            "energy_storage",
            "Energy Storage",
            "Batteries, cells, energy storage systems, charging and related "
            "safety requirements.",
        ),
        LabelSpec(
            "security_fire_safety",
            "Security & Fire Safety",
            "Fire detection and suppression, explosion protection, personal "
            "protective equipment and security systems.",
        ),
        LabelSpec(
            "packaging_printing",
            "Packaging & Printing",
            "Packaging materials and containers, printing processes, inks and "
            "labelling.",
        ),
        LabelSpec(
            "textile_leather",
            "Textile & Leather",
            "Fibres, fabrics, technical textiles, leather processing and their test "
            "methods.",
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
