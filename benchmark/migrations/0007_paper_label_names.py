"""The default taxonomy takes the paper's label names (Tables 13 and 14) and declares
aliases. Existing benchmarks follow where a label still has Assay's earlier default
name; a name a team chose is left alone. Codes never change."""

from django.db import migrations

# (dimension code, label code): (earlier default name, the paper's name)
RENAMED = {
    ("capability", "process_principles"): ("Process & Principles", "Process Principles"),
    ("industry", "chemical_coatings"): ("Chemicals & Coatings", "Chemical & Coatings"),
    ("industry", "cross_industry"): ("Cross-industry", "Cross-Industry"),
    ("industry", "energy_storage"): ("Energy Storage", "Energy & Storage"),
}


# Aliases the default taxonomy declared when this migration was written (frozen:
# a migration must not change with later code).
DEFAULT_ALIASES = {
    ("capability", "selection_substitution"): ["选型与替代"],
    ("capability", "standards_terminology"): ["标准与术语"],
    ("capability", "process_principles"): ["Process & Principles", "工艺原理"],
    ("capability", "safety_compliance"): ["安全与合规"],
    ("capability", "quality_metrology"): ["质量与计量"],
    ("capability", "fault_diagnosis"): ["故障诊断"],
    ("capability", "engineering_calculation"): ["工程计算"],
    ("industry", "machinery_hardware"): ["机械与五金"],
    ("industry", "chemical_coatings"): ["Chemicals & Coatings", "化工与涂料"],
    ("industry", "electronics_sensors"): ["电子与传感器"],
    ("industry", "electrical_power"): ["电气与电力"],
    ("industry", "cross_industry"): ["Cross-industry", "跨行业"],
    ("industry", "metallurgy_mining"): ["冶金与矿业"],
    ("industry", "energy_storage"): ["Energy Storage", "能源与储能"],
    ("industry", "security_fire_safety"): ["安防与消防"],
    ("industry", "packaging_printing"): ["包装与印刷"],
    ("industry", "textile_leather"): ["纺织与皮革"],
}


def to_paper_names(apps, schema_editor):
    Label = apps.get_model("benchmark", "Label")
    aliases = DEFAULT_ALIASES
    for label in Label.objects.select_related("dimension"):
        key = (label.dimension.code, label.code)
        changed = []
        if key in RENAMED and label.name == RENAMED[key][0]:
            label.name = RENAMED[key][1]
            changed.append("name")
        if key in aliases and not label.aliases:
            label.aliases = aliases[key]
            changed.append("aliases")
        if changed:
            label.save(update_fields=changed)


def to_earlier_names(apps, schema_editor):
    Label = apps.get_model("benchmark", "Label")
    for label in Label.objects.select_related("dimension"):
        key = (label.dimension.code, label.code)
        if key in RENAMED and label.name == RENAMED[key][1]:
            label.name = RENAMED[key][0]
            label.save(update_fields=["name"])


class Migration(migrations.Migration):
    dependencies = [("benchmark", "0006_label_aliases")]

    operations = [migrations.RunPython(to_paper_names, to_earlier_names)]
