"""Small builders for benchmark test data, written through benchmark.actions."""

from benchmark.actions import do_add_rendering_version, do_set_final_label
from benchmark.models import Item, Label, Rendering

# Realistic industrial items in the four languages of the default benchmark; the texts
# restate well-known facts from the cited standards.
SAMPLE_ITEMS = [
    {
        "external_id": "IB-0001",
        "source_kind": Item.SourceKind.STANDARD,
        "source_reference": "GB/T 3098.1-2010",
        "knowledge_text": "GB/T 3098.1-2010 紧固件机械性能 螺栓、螺钉和螺柱："
        "性能等级 8.8 的公称抗拉强度 Rm 为 800 MPa，公称下屈服强度 ReL 为 640 MPa。",
        "difficulty": Item.Difficulty.EASY,
        "labels": {
            "capability": "standards_terminology",
            "industry": "machinery_hardware",
        },
        "renderings": {
            "zh": (
                "按照 GB/T 3098.1-2010，性能等级为 8.8 级的螺栓，其公称抗拉强度和"
                "公称屈服强度分别是多少？",
                "公称抗拉强度 800 MPa，公称屈服强度 640 MPa（屈强比 0.8）。",
            ),
            "en": (
                "Under GB/T 3098.1-2010, what are the nominal tensile strength and "
                "nominal yield strength of a property class 8.8 bolt?",
                "Nominal tensile strength 800 MPa and nominal yield strength 640 MPa "
                "(yield ratio 0.8).",
            ),
            "ru": (
                "Каковы номинальный предел прочности на растяжение и номинальный "
                "предел текучести болта класса прочности 8.8 по GB/T 3098.1-2010?",
                "Номинальный предел прочности 800 МПа, номинальный предел текучести "
                "640 МПа (отношение 0,8).",
            ),
            "vi": (
                "Theo GB/T 3098.1-2010, độ bền kéo danh nghĩa và giới hạn chảy danh "
                "nghĩa của bu lông cấp bền 8.8 là bao nhiêu?",
                "Độ bền kéo danh nghĩa 800 MPa, giới hạn chảy danh nghĩa 640 MPa "
                "(tỷ số chảy 0,8).",
            ),
        },
    },
    {
        "external_id": "IB-0002",
        "source_kind": Item.SourceKind.STANDARD,
        "source_reference": "GB/T 4208-2017",
        "knowledge_text": "GB/T 4208-2017 外壳防护等级（IP代码）："
        "第一位特征数字 6 表示尘密；第二位特征数字 7 表示防短时间浸水影响。",
        "difficulty": Item.Difficulty.MEDIUM,
        "labels": {
            "capability": "standards_terminology",
            "industry": "electronics_sensors",
        },
        "renderings": {
            "zh": (
                "外壳防护等级 IP67 中的两位数字分别代表什么含义？",
                "6 表示尘密，完全防止灰尘进入；7 表示防短时间浸水，浸入 1 m 深水中 "
                "30 min 不产生有害影响。",
            ),
            "en": (
                "What do the two digits in the enclosure rating IP67 mean?",
                "6: dust-tight, no ingress of dust; 7: protected against temporary "
                "immersion, 1 m of water for 30 min without harmful effects.",
            ),
            "ru": (
                "Что означают две цифры в степени защиты оболочки IP67?",
                "6 — пыленепроницаемость; 7 — защита при кратковременном погружении "
                "в воду на глубину 1 м в течение 30 минут.",
            ),
            "vi": (
                "Hai chữ số trong cấp bảo vệ vỏ IP67 có ý nghĩa gì?",
                "6: kín bụi hoàn toàn; 7: chịu được ngâm nước tạm thời ở độ sâu 1 m "
                "trong 30 phút mà không bị ảnh hưởng có hại.",
            ),
        },
    },
    {
        "external_id": "IB-0003",
        "source_kind": Item.SourceKind.STANDARD,
        "source_reference": "GB/T 3836.1-2021",
        "knowledge_text": "GB/T 3836 爆炸性环境：标志 Ex d IIB T4 Gb 表示隔爆型，"
        "适用于 IIB 类气体，最高表面温度不超过 135 ℃，设备保护级别 Gb。",
        "difficulty": Item.Difficulty.HARD,
        "labels": {
            "capability": "safety_compliance",
            "industry": "security_fire_safety",
        },
        "renderings": {
            "zh": (
                "防爆标志 Ex d IIB T4 Gb 中 T4 对设备最高表面温度的要求是什么？",
                "T4 组别要求设备最高表面温度不超过 135 ℃。",
            ),
            "en": (
                "In the explosion-proof marking Ex d IIB T4 Gb, what does T4 require "
                "of the maximum surface temperature?",
                "Temperature class T4: maximum surface temperature not above 135 °C.",
            ),
            "ru": (
                "Что требует температурный класс T4 в маркировке взрывозащиты "
                "Ex d IIB T4 Gb?",
                "Максимальная температура поверхности не выше 135 °C.",
            ),
            "vi": (
                "Trong ký hiệu phòng nổ Ex d IIB T4 Gb, cấp nhiệt độ T4 yêu cầu gì "
                "về nhiệt độ bề mặt tối đa?",
                "Nhiệt độ bề mặt tối đa không vượt quá 135 °C.",
            ),
        },
    },
    {
        "external_id": "IB-0004",
        "source_kind": Item.SourceKind.PRODUCT,
        "source_reference": "YJV 0.6/1 kV 3×95 mm² datasheet",
        "knowledge_text": "YJV 0.6/1 kV 交联聚乙烯绝缘电力电缆，导体最高工作温度 90 ℃，"
        "短路时（最长 5 s）导体最高温度 250 ℃。",
        "difficulty": Item.Difficulty.MEDIUM,
        "labels": {
            "capability": "selection_substitution",
            "industry": "electrical_power",
        },
        "renderings": {
            "zh": (
                "YJV 交联聚乙烯绝缘电缆的导体长期最高工作温度是多少？",
                "90 ℃；短路时（不超过 5 s）导体最高温度 250 ℃。",
            ),
            "en": (
                "What is the maximum continuous conductor temperature of a YJV "
                "XLPE-insulated cable?",
                "90 °C; 250 °C during a short circuit of at most 5 s.",
            ),
            "ru": (
                "Какова длительно допустимая температура жилы кабеля YJV с изоляцией "
                "из сшитого полиэтилена?",
                "90 °C; при коротком замыкании (до 5 с) — 250 °C.",
            ),
            "vi": (
                "Nhiệt độ làm việc lâu dài tối đa của ruột dẫn cáp YJV cách điện XLPE "
                "là bao nhiêu?",
                "90 °C; khi ngắn mạch (tối đa 5 giây) là 250 °C.",
            ),
        },
    },
    {
        "external_id": "IB-0005",
        "source_kind": Item.SourceKind.OTHER,
        "source_reference": "",
        "knowledge_text": "钢管公称压力 PN16 表示在 20 ℃ 时"
        "允许的最大工作压力为 1.6 MPa。",
        "difficulty": Item.Difficulty.UNSET,
        "labels": {"capability": "engineering_calculation"},
        "renderings": {
            "zh": (
                "公称压力 PN16 的管道在 20 ℃ 时允许的最大工作压力是多少 MPa？",
                "1.6 MPa。",
            ),
            "en": (
                "What is the maximum allowable working pressure at 20 °C of a PN16 "
                "pipe, in MPa?",
                "1.6 MPa.",
            ),
            "ru": (
                "Каково максимально допустимое рабочее давление трубы PN16 при 20 °C "
                "в МПа?",
                "1,6 МПа.",
            ),
            "vi": (
                "Áp suất làm việc tối đa cho phép ở 20 °C của ống PN16 là bao nhiêu "
                "MPa?",
                "1,6 MPa.",
            ),
        },
    },
]


def make_item(
    benchmark,
    external_id: str,
    *,
    renderings: dict[str, tuple[str, str]],
    labels: dict[str, str] | None = None,
    source_kind: str = Item.SourceKind.STANDARD,
    source_reference: str = "",
    knowledge_text: str = "",
    difficulty: str = Item.Difficulty.UNSET,
    status: str = Item.Status.ACTIVE,
    user=None,
) -> Item:
    """An item with one current rendering per language and imported final labels."""
    item = Item.objects.create(
        benchmark=benchmark,
        external_id=external_id,
        source_kind=source_kind,
        source_reference=source_reference,
        knowledge_text=knowledge_text,
        difficulty=difficulty,
        status=status,
    )
    for language, (question, answer) in renderings.items():
        do_add_rendering_version(
            item,
            language,
            question=question,
            answer=answer,
            origin=(
                Rendering.Origin.SOURCE
                if language == benchmark.source_language
                else Rendering.Origin.IMPORTED
            ),
            review_status=Rendering.ReviewStatus.APPROVED,
            user=user,
        )
    for dimension_code, label_code in (labels or {}).items():
        label = Label.objects.get(
            dimension__benchmark=benchmark,
            dimension__code=dimension_code,
            code=label_code,
        )
        do_set_final_label(
            item, label, provenance="imported", user=user, note="from test data"
        )
    return item


def make_sample_items(benchmark, user=None) -> dict[str, Item]:
    return {
        spec["external_id"]: make_item(benchmark, user=user, **spec)
        for spec in SAMPLE_ITEMS
    }


def make_plain_items(benchmark, count: int, *, prefix: str = "P") -> list[Item]:
    """`count` items with an English rendering each, for paging and query counts."""
    return [
        make_item(
            benchmark,
            f"{prefix}-{index:04d}",
            renderings={"en": (f"Plain question {index}", f"Answer {index}")},
        )
        for index in range(count)
    ]
