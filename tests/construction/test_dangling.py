"""The dangling-reference detector: whole phrases, in Chinese and English, across
full-width and half-width forms and case, with spans in the original text."""

from construction.dangling import (
    Hit,
    default_phrases,
    find_dangling,
    parse_phrases,
    phrases_key,
    segments,
)

ZH = default_phrases("zh")
EN = default_phrases("en")


def found(text, phrases):
    return [
        (hit.phrase, text[hit.start : hit.end]) for hit in find_dangling(text, phrases)
    ]


def test_chinese_phrases_match_anywhere():
    text = "该产品的额定电压是多少？如图所示，上述螺栓的材质是什么？"
    assert found(text, ZH) == [("该产品", "该产品"), ("如图", "如图"), ("上述", "上述")]


def test_a_clean_question_has_no_hit():
    assert find_dangling("按 GB/T 2099.1，插座的额定电压最高是多少伏？", ZH + EN) == []


def test_english_is_matched_as_whole_words_whatever_the_case():
    assert found("What voltage does This Model take?", EN) == [
        ("this model", "This Model")
    ]
    assert found("this  product\nline", EN) == [("this product", "this  product")]
    assert found("Why is this modelling approach used?", EN) == []
    assert found("In this models' manual", EN) == []


def test_full_width_text_matches_and_spans_point_into_the_original():
    text = "ＴＨＩＳ　ＭＯＤＥＬ的电流"
    (hit,) = find_dangling(text, EN)
    assert (hit.phrase, text[hit.start : hit.end]) == (
        "this model",
        "ＴＨＩＳ　ＭＯＤＥＬ",
    )
    # A phrase configured in full-width forms matches half-width text, too.
    assert found("see this product", ["ｔｈｉｓ ｐｒｏｄｕｃｔ"]) == [
        ("ｔｈｉｓ ｐｒｏｄｕｃｔ", "this product")
    ]


def test_spans_survive_characters_that_fold_to_several():
    text = "ﬁ 该型号"  # the ligature folds to two characters
    (hit,) = find_dangling(text, ZH)
    assert text[hit.start : hit.end] == "该型号"


def test_the_longer_phrase_wins_where_two_overlap():
    assert found("该产品型号是什么", ["该产品", "该产品型号"]) == [
        ("该产品型号", "该产品型号")
    ]


def test_phrase_lists_are_configurable():
    phrases = parse_phrases("  本品 \n\n本品\nthe said  device\n")
    assert phrases == ["本品", "the said device"]
    assert found("The said device fails", phrases) == [
        ("the said device", "The said device")
    ]
    assert phrases_key(phrases) != phrases_key(ZH)
    assert phrases_key(phrases) == phrases_key(list(phrases))
    assert default_phrases("zh-CN") == ZH
    assert default_phrases("xx") == ()
    assert find_dangling("anything", []) == []


def test_segments_cut_the_text_at_the_hits():
    assert segments("问该产品呢", [Hit("该产品", 1, 4)]) == [
        ("问", False),
        ("该产品", True),
        ("呢", False),
    ]
