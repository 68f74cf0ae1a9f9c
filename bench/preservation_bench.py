"""Preservation check at paper scale: 2,049 items × 3 target languages = 6,147
question–answer renderings checked against their Chinese source.

    .venv/bin/python bench/preservation_bench.py [--repeat 3]

Renderings are the demo benchmark's hand-written items (benchmark/demo/items.jsonl)
repeated to paper size, so the texts carry real numbers, units, standard ids,
formulas and model codes in zh/en/ru/vi. No database or Django settings needed.
"""

import argparse
import itertools
import json
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judging.translation.rendering_check import check_rendering  # noqa: E402

ITEMS, LANGUAGES = 2049, ("en", "ru", "vi")


def renderings() -> list[tuple[dict, dict, str]]:
    with (ROOT / "benchmark" / "demo" / "items.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line)["renderings"] for line in lines]
    pairs = [
        (row["zh"], row[language], language)
        for row in itertools.islice(itertools.cycle(rows), ITEMS)
        for language in LANGUAGES
    ]
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pairs = renderings()
    seconds, failed = [], 0
    for _ in range(args.repeat):
        started = time.perf_counter()
        failed = sum(
            not check_rendering(
                source["question"],
                source["answer"],
                target["question"],
                target["answer"],
                source_language="zh",
                target_language=language,
            ).passed
            for source, target, language in pairs
        )
        seconds.append(time.perf_counter() - started)
    print(
        f"{len(pairs)} renderings: best {min(seconds):.2f} s, median "
        f"{statistics.median(seconds):.2f} s "
        f"({len(pairs) / min(seconds):,.0f} renderings/s); "
        f"{failed} flagged (hand-written renderings: expected 0)"
    )


if __name__ == "__main__":
    main()
