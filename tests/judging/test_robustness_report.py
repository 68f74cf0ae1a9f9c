"""The report from the database equals robustness computed by hand (a plain loop
over seeds and variants) on the answers of several models asked for real by the
reading test server, refusals and several answers among them; and a benchmark
without variants or runs says so."""

import math

import numpy as np
import pytest
from django.urls import reverse

from benchmark import formats
from benchmark.actions import do_create_variants
from benchmark.models import ItemVariant
from judging.evaluation.actions import do_start_evaluation
from judging.evaluation.pipeline import run_evaluation
from judging.llm.models import Endpoint
from judging.robustness import actions, generation, report
from judging.robustness.relations import RELATIONS, Change
from tests.judging.robustness_fixtures import make_replies, make_seed
from tests.openai_stub import OpenAIStub, ReadingModel

ALL = list(generation.DETERMINISTIC)
VOLTS = ["110 V", "220 V", "250 V", "380 V"]


def build_world(benchmark, rng):
    actions.do_replace_resources(
        benchmark, "kind,language,key,value\nsynonym,zh,插座,插口\nlaw,zh,*,电力法\n"
    )
    for s in range(8):
        make_seed(
            benchmark,
            f"MC-{s}",
            f"插座{s}的额定电压是多少？长{s + 1}0 cm。",
            options=VOLTS,
            correct_options=["ABCD"[rng.integers(4)]],
            domain=("电力", "机械")[s % 2],
        )
        make_seed(
            benchmark,
            f"TF-{s}",
            f"插座{s}的额定电流为16 A。",
            correct_answer=bool(rng.integers(2)),
            domain=("电力", "化工")[s % 2],
        )
    actions.do_generate_variants(
        benchmark, [formats.MULTIPLE_CHOICE, formats.TRUE_FALSE], ALL, "domain"
    )
    entries = generation.stored_entries(benchmark)
    specs = [
        generation.variant_spec(
            seed, "logic", entries, llm_text=seed.rendering.question + "不成立。"
        )
        for seed in generation.seeds(benchmark, [formats.TRUE_FALSE], "domain")
    ]
    do_create_variants(benchmark, specs)


def beliefs(rng) -> dict:
    """What one model believes (tests.openai_stub.ReadingModel): per seed, and
    apart per renamed term (插口, the synonym variants), an option's value, two
    of them (several answers), or nothing (a refusal); per TF statement, 16 A
    (true), 10 A (false) or nothing."""
    facts = {}
    for s in range(8):
        for noun in ("插座", "插口"):
            roll = rng.random()
            if roll < 0.1:
                continue
            if roll < 0.15:
                facts[f"{noun}{s}的额定电压"] = ("110 V", "380 V")
            else:
                facts[f"{noun}{s}的额定电压"] = VOLTS[rng.integers(4)]
            if rng.random() > 0.1:
                facts[f"{noun}{s}的额定电流"] = ("16 A", "10 A")[rng.integers(2)]
    return facts


def by_hand(benchmark, replies, group_of):
    """{group: (correct robustness, incorrect robustness)} for one model."""
    shares = {}  # (group, seed) -> [consistent, compared]
    for link in ItemVariant.objects.select_related("seed", "item"):
        seed, variant = link.seed, link.item
        a, b = answer(seed, replies[seed]), answer(variant, replies[variant])
        if a is None or b is None:
            continue
        change = RELATIONS[link.relation].change
        if change == Change.IDENTITY:
            same = b == a
        elif change == Change.FLIP:
            same = b == 1 - a
        else:
            same = link.option_map[b] == a
        tally = shares.setdefault((group_of(link), seed.pk), [0, 0, right(seed, a)])
        tally[0] += same
        tally[1] += 1
    # Study 002 §3: consistent variants over compared variants, pooled over the
    # seeds answered right (correct) or wrong (incorrect).
    out = {}
    for (group, _), (consistent, compared, was_right) in shares.items():
        side = out.setdefault(group, [[0, 0], [0, 0]])[0 if was_right else 1]
        side[0] += consistent
        side[1] += compared
    return {
        group: tuple(c / n if n else math.nan for c, n in sides)
        for group, sides in out.items()
    }


def answer(item, text):
    """The reading server's reply read by hand: "true" / "false", or "Answer: B";
    anything else (several letters, a refusal) has no single answer."""
    if item.format == formats.TRUE_FALSE:
        return {"true": 1, "false": 0}.get(text)
    letters = text.removeprefix("Answer: ")
    if text.startswith("Answer: ") and len(letters) == 1:
        return "ABCDEFG".index(letters)
    return None


def right(seed, a):
    if seed.format == formats.TRUE_FALSE:
        return a == int(seed.correct_answer)
    return "ABCDEFG"[a] in seed.correct_options


@pytest.mark.parametrize("seed", [1, 2])
def test_the_report_matches_robustness_by_hand(benchmark, seed, monkeypatch):
    """Three models asked every seed and variant for real, by the reading test
    server: each answers what it believes of the option texts it is shown."""
    monkeypatch.setenv("STUB_API_KEY", "k")
    rng = np.random.default_rng(seed)
    build_world(benchmark, rng)
    benchmark.scoring_scale = benchmark.ScoringScale.BINARY
    benchmark.save(update_fields=["scoring_scale"])
    readers = {name: ReadingModel(beliefs(rng)) for name in ("m-1", "m-2", "m-3")}
    models = {}
    with OpenAIStub(api_key="k", responder=lambda b: readers[b["model"]](b)) as stub:
        for name in readers:
            endpoint = Endpoint.objects.create(
                name=name,
                base_url=stub.base_url,
                model=name,
                api_key_env="STUB_API_KEY",
                max_concurrency=8,
            )
            run = do_start_evaluation(
                benchmark,
                tested=endpoint,
                judge=None,
                sv_judge=None,
                language="zh",
                enqueue=False,
            )
            run_evaluation(run.pk)
            models[name] = {
                response.item: response.text
                for response in run.responses.select_related("item")
            }
        # Every item asked of every model, no two joined.
        assert stub.request_count == 3 * benchmark.items.count()
        assert stub.duplicate_answers() == {}
    built = report.build(benchmark)
    assert built.variants == ItemVariant.objects.count() > 40
    pooled = built.result.pooled
    assert np.isfinite(pooled.correct).all() and np.isfinite(pooled.incorrect).all()
    for m, (name, replies) in enumerate(models.items()):
        for table, group_of in (
            (built.result.pooled, lambda link: "all"),
            (built.result.by_relation, lambda link: link.relation),
            (built.result.by_sector, lambda link: link.sector),
        ):
            expected = by_hand(benchmark, replies, group_of)
            for g, group in enumerate(table.groups):
                want = expected.get(group, (math.nan, math.nan))
                got = (table.correct[m, g], table.incorrect[m, g])
                np.testing.assert_allclose(got, want, err_msg=f"{name} {group}")
        # Figure 3 / Table 6: correct robustness per relation × sector cell, then
        # the mean over relations (a sector) or over sectors (a relation).
        cells = by_hand(benchmark, replies, lambda link: (link.relation, link.sector))
        result = built.result
        for s, sector in enumerate(result.by_sector.groups):
            values = [v[0] for (_, sec), v in cells.items() if sec == sector]
            values = [v for v in values if not math.isnan(v)]
            want = np.mean(values) if values else math.nan
            np.testing.assert_allclose(result.sector_score[m, s], want)
        for r, relation in enumerate(result.by_relation.groups):
            values = [v[0] for (rel, _), v in cells.items() if rel == relation]
            values = [v for v in values if not math.isnan(v)]
            want = np.mean(values) if values else math.nan
            np.testing.assert_allclose(result.relation_score[m, r], want)


def test_a_benchmark_without_variants_or_runs_says_so(benchmark, client_for):
    url = reverse("judging:robustness_report", args=[benchmark.slug])
    assert "No variants yet" in client_for("manager").get(url).content.decode()
    make_seed(benchmark, "TF-1", "插座额定电流为16 A。", correct_answer=True)
    actions.do_generate_variants(
        benchmark, [formats.TRUE_FALSE], ["precision"], "domain"
    )
    assert "No evaluation run" in client_for("manager").get(url).content.decode()
    download = reverse(
        "judging:robustness_download", args=[benchmark.slug, "robustness"]
    )
    assert client_for("manager").get(download).status_code == 404


def test_names_reach_the_page_escaped_in_tables_and_heatmaps(benchmark, client_for):
    seed = make_seed(benchmark, "TF-1", "插座额定电流为16 A。", correct_answer=True)
    actions.do_generate_variants(
        benchmark, [formats.TRUE_FALSE], ["precision"], "domain"
    )
    variant = ItemVariant.objects.get().item
    make_replies(
        benchmark, "<script>alert(1)</script>--><b>", {seed: "正确", variant: "正确"}
    )
    url = reverse("judging:robustness_report", args=[benchmark.slug])
    html = client_for("manager").get(url).content.decode()
    assert "<svg" in html
    assert "<script>alert" not in html and "<b>" not in html


def test_runs_in_another_language_are_left_out(benchmark):
    seed = make_seed(benchmark, "TF-1", "插座额定电流为16 A。", correct_answer=True)
    actions.do_generate_variants(
        benchmark, [formats.TRUE_FALSE], ["precision"], "domain"
    )
    variant = ItemVariant.objects.get().item
    make_replies(benchmark, "model-x", {seed: "正确", variant: "正确"})
    english = make_replies(benchmark, "model-x", {seed: "True", variant: "True"})
    english.language = "en"
    english.save(update_fields=["language"])
    built = report.build(benchmark)
    assert built.labels == ["model-x (zh)"] and built.missing == 0
