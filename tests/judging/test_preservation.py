"""The preservation checker on Chinese sources and English, Russian and Vietnamese
renderings."""

import json

from hypothesis import given
from hypothesis import strategies as st

from judging.translation.preservation import check_preservation, extract_tokens
from judging.translation.rendering_check import check_rendering, segments


def check(source, target, target_language="en", source_language="zh"):
    return check_preservation(
        source, target, source_language=source_language, target_language=target_language
    )


def values(tokens, category):
    return [token.value for token in tokens if token.category == category]


def missing(result, category):
    return [token.text for token in result.missing if token.category == category]


def extra(result, category):
    return [token.text for token in result.extra if token.category == category]


SOURCE = (
    "依据GB/T 3098.1-2010，M12螺栓的抗拉强度为８００兆帕，板厚３.５毫米，"
    "公差±0.5 mm，工作温度-20～+60℃，防护等级IP67。"
)


def test_faithful_english_rendering_passes_with_full_width_digits_and_chinese_units():
    target = (
        "According to GB/T 3098.1-2010, the tensile strength of an M12 bolt is "
        "800 MPa, the plate is 3.5 mm thick, the tolerance is ±0.5 mm, the working "
        "temperature is -20 to +60 °C and the protection rating is IP67."
    )
    result = check(SOURCE, target)
    assert result.passed, (result.missing, result.extra)
    source_tokens = extract_tokens(SOURCE, "zh")
    assert values(source_tokens, "number") == ["800", "3.5", "±0.5", "-20", "60"]
    assert values(source_tokens, "unit") == ["MPa", "mm", "mm", "°C", "IP67"]
    assert values(source_tokens, "standard") == ["GB/T3098.1-2010"]
    assert values(source_tokens, "model") == ["M12"]


def test_faithful_russian_rendering_with_decimal_comma_and_cyrillic_units():
    target = (
        "Согласно GB/T 3098.1-2010 предел прочности болта M12 составляет 800 МПа, "
        "толщина листа 3,5 мм, допуск ±0,5 мм, рабочая температура от -20 до "
        "+60 °С (С кириллицей), степень защиты IP67."
    )
    result = check(SOURCE, target, "ru")
    assert result.passed, (result.missing, result.extra)


def test_faithful_vietnamese_rendering_with_decimal_comma():
    target = (
        "Theo GB/T 3098.1-2010, độ bền kéo của bu lông M12 là 800 MPa, tấm dày "
        "3,5 mm, dung sai ±0,5 mm, nhiệt độ làm việc từ -20 đến +60 °C, cấp bảo vệ "
        "IP67."
    )
    assert check(SOURCE, target, "vi").passed


def test_unit_conversion_is_reported_as_missing_and_extra():
    result = check("工作压力为10兆帕。", "The working pressure is 1450 psi.")
    assert not result.passed
    assert missing(result, "number") == ["10"]
    assert missing(result, "unit") == ["兆帕"]
    assert extra(result, "number") == ["1450"]
    assert extra(result, "unit") == ["psi"]


def test_changed_number_is_reported():
    result = check("间隙为3.5毫米。", "The clearance is 3.6 mm.")
    assert missing(result, "number") == ["3.5"]
    assert extra(result, "number") == ["3.6"]
    assert not missing(result, "unit")


def test_dropped_standard_identifier_and_dropped_year_are_reported():
    result = check("按GB 50016-2014和IEC 60529执行。", "Follow IEC 60529.")
    assert missing(result, "standard") == ["GB 50016-2014"]
    dropped_year = check("按GB/T 1591—2018执行。", "Follow GB/T 1591.")
    assert missing(dropped_year, "standard") == ["GB/T 1591—2018"]
    assert extra(dropped_year, "standard") == ["GB/T 1591"]
    same = check("按GB/T 1591—2018执行。", "Follow GB/T 1591-2018.")
    assert same.passed


def test_standard_identifiers_of_many_bodies():
    text = (
        "ISO 898-1:2013、ASTM A193、EN 10025-2、DIN 912、JB/T 10391、HG/T 20592、"
        "UN38.3、GB 50016、DIN EN ISO 4014"
    )
    assert values(extract_tokens(text, "zh"), "standard") == [
        "ISO898-1:2013",
        "ASTMA193",
        "EN10025-2",
        "DIN912",
        "JB/T10391",
        "HG/T20592",
        "UN38.3",
        "GB50016",
        "DINENISO4014",
    ]


def test_ranges_match_whatever_the_separator():
    source = "尺寸10～20毫米，另一种为10-20 mm，或10至20毫米。"
    assert check(source, "Size 10–20 mm, another 10-20 mm, or 10 to 20 mm.").passed
    assert check(source, "Size from 10 to 20 mm in all three cases.").passed
    changed = check(source, "Size 10–25 mm, another 10-20 mm, or 10 to 20 mm.")
    assert extra(changed, "number") == ["25"]
    assert not changed.missing


def test_tolerance_sign_is_preserved():
    result = check("公差±0.5毫米", "Tolerance 0.5 mm")
    assert missing(result, "number") == ["±0.5"]
    assert extra(result, "number") == ["0.5"]


def test_negative_number_differs_from_positive():
    result = check("最低温度-40℃", "Minimum temperature 40 °C")
    assert missing(result, "number") == ["-40"]


def test_formulas_and_model_codes_must_be_kept():
    source = "用H2SO4和NaOH清洗6205-2RS轴承和YE3-132M-4电机，材料Q355B、304L、Cr2O3。"
    same = check(
        source,
        "Clean the 6205-2RS bearing and YE3-132M-4 motor with H₂SO₄ and NaOH; "
        "materials Q355B, 304L, Cr2O3.",
    )
    assert same.passed, (same.missing, same.extra)
    changed = check(
        source,
        "Clean the 6205-2Z bearing and YE3-132M-4 motor with H2SO3 and NaOH; "
        "materials Q355B, 304, Cr2O3.",
    )
    assert missing(changed, "model") == ["6205-2RS", "304L"]
    assert extra(changed, "model") == ["6205-2Z"]
    assert missing(changed, "formula") == ["H2SO4"]
    assert extra(changed, "formula") == ["H2SO3"]
    assert extra(changed, "number") == ["304"]
    tokens = extract_tokens(source, "zh")
    assert values(tokens, "formula") == ["H2SO4", "NaOH", "Cr2O3"]
    assert values(tokens, "model") == ["6205-2RS", "YE3-132M-4", "Q355B", "304L"]


def test_ip_rating_change_is_reported():
    result = check("防护等级IP67", "Protection rating IP65")
    assert missing(result, "unit") == ["IP67"]
    assert extra(result, "unit") == ["IP65"]


def test_chinese_units_map_to_symbols():
    source = (
        "截面积2.5平方毫米，扭矩50牛·米，功率7.5千瓦，"
        "电压10千伏，频率50赫兹，转速1450转/分"
    )
    target = (
        "Cross-section 2.5 mm², torque 50 N·m, power 7.5 kW, voltage 10 kV, "
        "frequency 50 Hz, speed 1450 r/min"
    )
    assert check(source, target).passed
    assert check(source, target.replace("mm²", "mm2").replace("r/min", "rpm")).passed
    assert values(extract_tokens(source, "zh"), "unit") == [
        "mm²",
        "N·m",
        "kW",
        "kV",
        "Hz",
        "r/min",
    ]


def test_sloppy_unit_case_in_source_is_not_a_change():
    assert check("强度为235Mpa，功率5.5KW", "Strength 235 MPa, power 5.5 kW").passed


def test_unit_without_number_is_checked():
    result = check("压力单位为兆帕。", "Pressure is given in psi.")
    assert missing(result, "unit") == ["兆帕"]
    assert extra(result, "unit") == ["psi"]


def test_russian_decimal_comma_equals_point_and_abbreviations_are_not_units():
    result = check(
        "间隙0.5毫米（见图3，2010年标准）。",
        "Зазор 0,5 мм (см. рис. 3, стандарт 2010 г.).",
        "ru",
    )
    assert result.passed, (result.missing, result.extra)
    assert values(extract_tokens("10 000 циклов, 1,25 МПа", "ru"), "number") == [
        "10000",
        "1.25",
    ]


def test_vietnamese_thousand_separators_and_ambiguous_groups():
    assert values(extract_tokens("10.000 chu kỳ, 1,5 kV", "vi"), "number") == [
        "10000",
        "1.5",
    ]
    assert check("转速1500转/分", "Tốc độ 1.500 vòng/phút", "vi").passed
    # An LLM may keep the English convention in Vietnamese text.
    assert check("转速1500转/分", "Tốc độ 1,500 vòng/phút", "vi").passed
    assert check("电阻1.5欧姆", "Điện trở 1,5 Ω", "vi").passed
    assert not check("电阻1.5欧姆", "Điện trở 15 Ω", "vi").passed


def test_english_comma_groups_thousands_but_separates_lists():
    assert values(extract_tokens("1,000 and 12,500.5", "en"), "number") == [
        "1000",
        "12500.5",
    ]
    assert values(extract_tokens("values 0,5", "en"), "number") == ["0", "5"]


def test_number_forms_compare_by_value():
    assert check("3.50毫米，1.0", "3.5 mm, 1").passed
    assert check("投资3万元", "an investment of 30,000 yuan").passed
    assert check("含量5%", "содержание 5 %", "ru").passed
    assert check("1×10⁶次", "1 × 10^6 cycles").passed
    assert not check("含量5%", "content 5").passed


def test_small_numbers_may_be_spelled_out():
    assert check("需要2个螺栓", "Two bolts are needed").passed
    assert check("需要2个螺栓", "Нужны два болта", "ru").passed
    assert not check("需要7个螺栓", "Two bolts are needed").passed


def test_spans_point_into_the_original_text():
    for text, language in [(SOURCE, "zh"), ("Зазор 0,5 мм, 10 000 циклов", "ru")]:
        for token in extract_tokens(text, language):
            assert text[token.start : token.end] == token.text
    token = next(t for t in extract_tokens(SOURCE, "zh") if t.value == "°C")
    assert token.text == "℃"


def test_rendering_check_reports_by_category_with_spans():
    result = check_rendering(
        "螺栓强度为800兆帕？",
        "按GB/T 3098.1-2010，为800兆帕。",
        "Is the bolt strength 800 MPa?",
        "It is 116,000 psi.",
        source_language="zh",
        target_language="en",
    )
    assert result.question.passed
    assert not result.passed
    data = json.loads(json.dumps(result.as_dict()))
    assert data["missing"] == {
        "number": ["800"],
        "unit": ["兆帕"],
        "standard": ["GB/T 3098.1-2010"],
    }
    assert data["extra"] == {"number": ["116,000"], "unit": ["psi"]}
    target_spans = data["answer"]["target_spans"]
    assert [(s["text"], s["status"]) for s in target_spans] == [
        ("116,000", "extra"),
        ("psi", "extra"),
    ]
    assert {s["status"] for s in data["question"]["source_spans"]} == {"kept"}
    runs = segments("It is 116,000 psi.", target_spans)
    assert "".join(run["text"] for run in runs) == "It is 116,000 psi."
    assert [run["status"] for run in runs] == ["", "extra", "", "extra", ""]


@given(
    st.text(
        alphabet="0123456789０１２３.,-~±% mMPak毫米兆帕℃°CGB/T IP67H2SO4NaOH螺栓é",
        max_size=60,
    ),
    st.sampled_from(["zh", "en", "ru", "vi"]),
)
def test_a_text_always_preserves_itself(text, language):
    assert check_preservation(
        text, text, source_language=language, target_language=language
    ).passed
    for token in extract_tokens(text, language):
        assert text[token.start : token.end] == token.text


def test_brackets_hyphenated_words_and_code_ranges():
    source = (
        "原用06Cr19Ni10（304），改用022Cr17Ni12Mo2（316L），"
        "焊条E5015（J507），温度T4～T6，4极电机"
    )
    target = (
        "Originally 06Cr19Ni10 (304), now 022Cr17Ni12Mo2 (316L), electrode E5015 "
        "(J507), class T4–T6, a 4-pole motor"
    )
    assert check(source, target).passed
    tokens = extract_tokens(target, "en")
    assert values(tokens, "model") == [
        "06Cr19Ni10",
        "022Cr17Ni12Mo2",
        "316L",
        "E5015",
        "J507",
        "T4",
        "T6",
    ]
    assert values(tokens, "number") == ["304", "4"]


def test_minus_sign_after_punctuation_but_range_after_percent():
    assert values(extract_tokens("范围0～55 °C，−5 °C时", "zh"), "number") == [
        "0",
        "55",
        "-5",
    ]
    assert values(extract_tokens("molybdenum 2%–3%", "en"), "number") == ["2%", "3%"]


def test_hyphenated_unit_words():
    assert check("10小时率容量", "the rated 10-hour capacity").passed
    assert check("10小时率容量", "ёмкость 10-часового режима", "ru").passed
