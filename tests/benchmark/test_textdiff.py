"""The item history's text diff: words in spaced text, characters in Chinese, long
unchanged runs cut to the context around each change."""

from benchmark.textdiff import CONTEXT, diff_segments, tokens


def rebuild(segments, side: str) -> str:
    """The text on one side of a diff with no gaps: `before` or `after`."""
    skip = "insert" if side == "before" else "delete"
    return "".join(text for op, text in segments if op != skip)


def test_english_diff_is_word_level():
    before = "The quick brown fox jumps over the lazy dog."
    after = "The quick red fox jumped over the lazy dog!"
    segments = diff_segments(before, after)
    assert segments == [
        ("equal", "The quick "),
        ("delete", "brown"),
        ("insert", "red"),
        ("equal", " fox "),
        ("delete", "jumps"),
        ("insert", "jumped"),
        ("equal", " over the lazy dog"),
        ("delete", "."),
        ("insert", "!"),
    ]
    assert rebuild(segments, "before") == before
    assert rebuild(segments, "after") == after


def test_chinese_diff_is_character_level():
    before = "外壳防护等级 IP67 中的两位数字分别代表什么含义？"
    after = "外壳防护等级 IP68 中的两个数字分别代表什么意思？"
    segments = diff_segments(before, after)
    assert segments == [
        ("equal", "外壳防护等级 "),
        ("delete", "IP67"),
        ("insert", "IP68"),
        ("equal", " 中的两"),
        ("delete", "位"),
        ("insert", "个"),
        ("equal", "数字分别代表什么"),
        ("delete", "含义"),
        ("insert", "意思"),
        ("equal", "？"),
    ]
    assert rebuild(segments, "before") == before
    assert rebuild(segments, "after") == after


def test_words_end_at_chinese_characters():
    assert tokens("IP67中的 rating，6") == [
        "IP67",
        "中",
        "的",
        " ",
        "rating",
        "，",
        "6",
    ]


def test_a_change_at_character_200_of_500_is_shown_with_context():
    before = " ".join(f"word{i:03d}" for i in range(63))  # 63 × 8 − 1 characters
    assert len(before) == 503 and before.index("word025") == 200
    after = before.replace("word025", "CHANGED")
    segments = diff_segments(before, after)
    assert [op for op, _ in segments] == [
        "gap",
        "equal",
        "delete",
        "insert",
        "equal",
        "gap",
    ]
    assert segments[1:5] == [
        ("equal", before[200 - CONTEXT : 200]),
        ("delete", "word025"),
        ("insert", "CHANGED"),
        ("equal", before[207 : 207 + CONTEXT]),
    ]


def test_a_chinese_change_at_character_200_of_500_is_shown_with_context():
    before = ("设备外壳防护等级说明" * 50)[:500]
    after = before[:200] + "尘" + before[201:]
    segments = diff_segments(before, after)
    assert segments == [
        ("gap", "…"),
        ("equal", before[200 - CONTEXT : 200]),
        ("delete", before[200]),
        ("insert", "尘"),
        ("equal", before[201 : 201 + CONTEXT]),
        ("gap", "…"),
    ]


def test_unchanged_runs_between_changes_keep_context_on_both_sides():
    middle = " ".join(f"m{i:02d}" for i in range(40))
    segments = diff_segments(f"A {middle} B", f"X {middle} Y")
    assert [op for op, _ in segments] == [
        "delete",
        "insert",
        "equal",
        "gap",
        "equal",
        "delete",
        "insert",
    ]
    assert segments[2][1] == f" {middle}"[:CONTEXT]
    assert segments[4][1] == f"{middle} "[-CONTEXT:]


def test_short_unchanged_runs_are_not_cut():
    before = "x" * (2 * CONTEXT + 5)
    segments = diff_segments(f"a {before} b", f"c {before} d")
    assert ("equal", f" {before} ") in segments and "gap" not in dict(segments)


def test_set_cleared_and_unchanged_text():
    assert diff_segments("", "new text") == [("insert", "new text")]
    assert diff_segments("old text", "") == [("delete", "old text")]
    assert diff_segments("same", "same") == [("equal", "same")]
