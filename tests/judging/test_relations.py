"""The eight metamorphic relations: when each applies, what its variant is, and the
expected change of the answer; Chinese items throughout."""

import pytest

from judging.robustness.measures import Change
from judging.robustness.relations import (
    LOGIC_PROMPT,
    RELATIONS,
    Item,
    NotApplicable,
    Resources,
    Variant,
    generate,
    prompt,
)

MC_ITEM = Item(
    "一根长100厘米的钢管，壁厚3.7毫米，额定压力1.6兆帕，适用的介质是？",
    ("水", "蒸汽", "导热油", "天然气"),
    frozenset({1}),
    "zh",
    "电力",
)
TF_ITEM = Item("额定电压为10千伏的电缆可以用于380伏线路。", (), True, "zh", "电力")
OPEN_ITEM = Item("简述USB接口在工控机中的用途。", (), "连接外设", "zh", "电子")


def variant(name, item, resources=None, **kwargs) -> Variant:
    result = generate(name, item, resources, **kwargs)
    assert isinstance(result, Variant), result
    return result


def not_applicable(name, item, resources=None, **kwargs) -> str:
    result = generate(name, item, resources, **kwargs)
    assert isinstance(result, NotApplicable), result
    return result.reason


def test_the_registry_holds_the_eight_relations_in_the_study_order():
    assert list(RELATIONS) == [
        "magnitude",
        "precision",
        "synonym",
        "order",
        "logic",
        "general_context",
        "security_context",
        "irrelevant_content",
    ]
    assert [name for name, r in RELATIONS.items() if r.llm_written] == ["logic"]
    assert RELATIONS["logic"].prompt == LOGIC_PROMPT


# Magnitude --------------------------------------------------------------------------


def test_magnitude_converts_chinese_units_and_keeps_the_answer():
    result = variant("magnitude", MC_ITEM)
    assert result.text == (
        "一根长1米的钢管，壁厚0.37厘米，额定压力1600千帕，适用的介质是？"
    )
    assert (result.options, result.answer) == (MC_ITEM.options, MC_ITEM.answer)
    assert result.change is Change.IDENTITY


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("A 100 cm bar", "en", "A 1 m bar"),
        ("carries 220 V", "en", "carries 0.22 kV"),
        ("a mass of 500 g", "en", "a mass of 0.5 kg"),
        ("a 2 t load", "en", "a 2000 kg load"),
        ("holds 1,500 mL", "en", "holds 1.5 L"),
        ("容积500毫升", "zh", "容积0.5升"),
        ("重25公斤", "zh", "重25000克"),
        ("мощность 1500 Вт", "ru", "мощность 1,5 кВт"),
        ("длина 3,7 м", "ru", "длина 370 см"),
        ("áp suất 1,6 MPa", "vi", "áp suất 1600 kPa"),
    ],
)
def test_magnitude_units_and_scripts(text, language, expected):
    assert variant("magnitude", Item(text, language=language)).text == expected


@pytest.mark.parametrize(
    "text",
    [
        "The gap is 10~20 mm.",  # a range: "10" shares the unit
        "from 10 to 20 mm",
        "长度10至20米",
        "a 10 × 20 mm plate",
        "10±0.5 mm",
        "speed 5 m/s, area 3 m², energy 3 kWh",  # other units
        "螺栓M12，标准GB/T 3098.1-2010",  # codes, not quantities
        "水银柱高760毫米汞柱",
        "Изделие 2010 г. выпуска",  # a year, not grams
        "三米长的管道",  # a number in words
    ],
)
def test_magnitude_does_not_apply_without_a_convertible_quantity(text):
    language = "ru" if "г." in text else "en" if text.isascii() else "zh"
    reason = not_applicable("magnitude", Item(text, language=language))
    assert reason == "no number with a unit from the unit table"


def test_magnitude_leaves_ambiguous_grouping_alone():
    # Vietnamese "1.000 m" is 1000 m or 1 m: skipped; "3,7 m" is 3.7 m.
    result = variant("magnitude", Item("dài 1.000 m và 3,7 m", language="vi"))
    assert result.text == "dài 1.000 m và 370 cm"


# Precision --------------------------------------------------------------------------


def test_precision_adds_a_trailing_zero_to_every_quantity():
    result = variant("precision", MC_ITEM)
    assert result.text == (
        "一根长100.0厘米的钢管，壁厚3.70毫米，额定压力1.60兆帕，适用的介质是？"
    )
    assert result.change is Change.IDENTITY
    assert variant("precision", Item("3.7 m", language="en")).text == "3.70 m"
    assert variant("precision", Item("длина 3,7 м", language="ru")).text == (
        "длина 3,70 м"
    )
    assert variant("precision", Item("dài 4 m", language="vi")).text == "dài 4,0 m"
    assert "unit" in not_applicable("precision", Item("共3个螺栓"))


# Synonym ----------------------------------------------------------------------------

GLOSSARY = Resources(glossary={"USB": "U盘", "钢管": "钢制管道"})


def test_synonym_replaces_glossary_terms_in_text_and_options():
    item = Item("USB接口与USBC接口哪个更快？", ("USB", "USBC"), frozenset({1}))
    result = variant("synonym", item, GLOSSARY)
    assert result.text == "U盘接口与USBC接口哪个更快？"  # USBC is another word
    assert result.options == ("U盘", "USBC")
    assert (result.answer, result.change) == (frozenset({1}), Change.IDENTITY)
    assert variant("synonym", MC_ITEM, GLOSSARY).text.startswith(
        "一根长100厘米的钢制管道"
    )
    assert variant("synonym", OPEN_ITEM, GLOSSARY).answer == "连接外设"


def test_synonym_needs_a_glossary_term_in_the_item():
    assert (
        not_applicable("synonym", TF_ITEM, GLOSSARY) == "no glossary term in the item"
    )
    assert not_applicable("synonym", TF_ITEM) == "no glossary"


# Order ------------------------------------------------------------------------------


def test_order_shuffles_the_options_and_moves_the_key_with_its_option():
    result = variant("order", MC_ITEM, Resources(seed=7))
    assert sorted(result.options) == sorted(MC_ITEM.options)
    assert result.options != MC_ITEM.options
    assert result.change is Change.REMAP
    assert [MC_ITEM.options[p] for p in result.option_map] == list(result.options)
    (key,) = result.answer
    assert result.options[key] == "蒸汽"


def test_order_is_deterministic_per_seed():
    first = variant("order", MC_ITEM, Resources(seed=7)).option_map
    assert variant("order", MC_ITEM, Resources(seed=7)).option_map == first
    maps = {variant("order", MC_ITEM, Resources(seed=s)).option_map for s in range(20)}
    assert len(maps) > 1


def test_order_does_not_apply_to_tf_or_to_options_that_point_at_others():
    assert not_applicable("order", TF_ITEM) == "order applies to mc items, not tf"
    for last in ("以上都对", "All of the above", "A和B", "Все перечисленные"):
        item = Item("哪项正确？", ("甲", "乙", "丙", last), frozenset({3}))
        assert "points at others" in not_applicable("order", item)


# Logic ------------------------------------------------------------------------------


def test_logic_is_written_by_an_llm_and_flips_the_key():
    assert prompt("logic", TF_ITEM) == LOGIC_PROMPT.format(
        language="Chinese", text=TF_ITEM.text
    )
    negated = "额定电压为10千伏的电缆不可以用于380伏线路。"
    result = variant("logic", TF_ITEM, llm_text=f"“{negated}”")
    assert (result.text, result.answer) == (negated, False)
    assert result.change is Change.FLIP


def test_logic_applies_to_tf_only_and_needs_the_llm_reply():
    assert "tf items" in not_applicable("logic", MC_ITEM, llm_text="x")
    with pytest.raises(ValueError, match="llm_text"):
        generate("logic", TF_ITEM)
    assert "no negated" in not_applicable("logic", TF_ITEM, llm_text=TF_ITEM.text)
    with pytest.raises(ValueError):
        prompt("order", MC_ITEM)


# Contexts ---------------------------------------------------------------------------


def test_general_context_names_the_sector_in_the_item_language():
    assert variant("general_context", TF_ITEM).text == (
        "在电力行业中，额定电压为10千伏的电缆可以用于380伏线路。"
    )
    english = Item(
        "Which valve relieves pressure?", ("a",), frozenset({0}), "en", "oil"
    )
    assert variant("general_context", english).text == (
        "In the oil industry, which valve relieves pressure?"
    )
    acronym = Item("PLC outputs are isolated.", (), True, "en", "automation")
    assert variant("general_context", acronym).text.endswith(
        ", PLC outputs are isolated."
    )
    assert not_applicable("general_context", Item("x")) == "the item has no sector"


def test_security_context_names_the_law():
    law = Resources(law="《安全生产法》")
    result = variant("security_context", TF_ITEM, law)
    assert (
        result.text == "考虑到《安全生产法》，额定电压为10千伏的电缆可以用于380伏线路。"
    )
    assert (result.answer, result.change) == (True, Change.IDENTITY)
    english = Item("Is a permit required?", (), True, "en")
    assert variant(
        "security_context", english, Resources(law="Work Safety Law")
    ).text == ("Considering the Work Safety Law, is a permit required?")
    assert not_applicable("security_context", TF_ITEM) == "no law given for the item"


# Irrelevant content -----------------------------------------------------------------


def test_irrelevant_content_adds_a_never_right_option_last():
    result = variant("irrelevant_content", MC_ITEM)
    assert result.options[:4] == MC_ITEM.options
    assert result.options[4] in ("一杯绿茶", "一首唐诗", "一只橘猫")
    assert result.answer == MC_ITEM.answer
    assert (result.change, result.option_map) == (Change.ADDED, (0, 1, 2, 3, -1))
    own = Resources(irrelevant_options={"zh": ("月球的背面",)})
    assert variant("irrelevant_content", MC_ITEM, own).options[4] == "月球的背面"


def test_irrelevant_content_applies_to_short_positive_mc_only():
    seven = Item("哪项正确？", tuple("甲乙丙丁戊己庚"), frozenset({0}))
    assert "7 options" in not_applicable("irrelevant_content", seven)
    six = Item("哪项正确？", tuple("甲乙丙丁戊己"), frozenset({0}))
    assert len(variant("irrelevant_content", six).options) == 7
    negative = Item(
        "以下不属于安全装置的是？", ("安全阀", "爆破片", "压力表"), frozenset({2})
    )
    assert "negative question" in not_applicable("irrelevant_content", negative)
    english = Item("Which is NOT a relief device?", ("a", "b"), frozenset({1}), "en")
    assert "negative question" in not_applicable("irrelevant_content", english)
    assert "mc items" in not_applicable("irrelevant_content", TF_ITEM)
