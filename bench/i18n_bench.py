"""Page time of the item browser and the grading screen, per interface language
(#30: translating the interface must not make pages slower, ≤ 5 %).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/assay_bench_i18n \\
      SECRET_KEY=bench ALLOWED_HOSTS=testserver \\
      .venv/bin/python bench/i18n_bench.py [--repeat 300] [--repo PATH] \\
      [--languages en,zh-hans]

Migrates the database and loads the demo once (`load_demo`), then, as the demo
expert, requests through Django's test client — middleware, view, queries and
template — the item browser (no filter, and one capability) and the grading
screen (the page, and the HTMX POST that takes a task and renders it; the task
stays held, so every round renders the same screen). Rounds alternate the pages;
it prints p50 / p95 per page and language, of the wall time and of this process's
CPU time (the application's own work: what #30 adds; the database's is the same
before and after, and the CPU time hardly moves with the load of a shared machine).

`--repo` runs another checkout's code against the same database, e.g. `main`
before #30 (which knows only English): the "before" figures.
"""

import argparse
import os
import pathlib
import statistics
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--repeat", type=int, default=300)
parser.add_argument("--repo", default=str(pathlib.Path(__file__).resolve().parents[1]))
parser.add_argument("--languages", default="en,zh-hans")
ARGS = parser.parse_args()

sys.path.insert(0, ARGS.repo)
os.chdir(ARGS.repo)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assay.settings")
os.environ.setdefault("DEBUG", "0")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db.models import Q  # noqa: E402
from django.test import Client  # noqa: E402

HTMX = {"HTTP_HX_REQUEST": "true"}


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share / 100 * (len(ordered) - 1)))]


def main() -> int:
    from annotation.models import Campaign
    from benchmark.models import Benchmark

    call_command("migrate", verbosity=0)
    if not Benchmark.objects.filter(slug="industrybench-demo").exists():
        call_command("load_demo", allow_without_debug=True, verbosity=0)
    expert = get_user_model().objects.get(username="expert")
    campaign = (
        Campaign.objects.filter(kind="grading", status="open")
        .filter(Q(assignees=expert) | Q(assignees=None))
        .order_by("pk")
        .first()
    )
    known = {code for code, _name in getattr(settings, "LANGUAGES", [("en", "")])}
    pages = {
        "item browser": ("get", "/b/industrybench-demo/items/", {}),
        "item browser, capability": (
            "get",
            "/b/industrybench-demo/items/?capability=fault_diagnosis",
            {},
        ),
        "grading screen": ("get", f"/annotation/campaigns/{campaign.pk}/grade/", {}),
        "grading task (HTMX)": (
            "post",
            f"/annotation/campaigns/{campaign.pk}/grade/",
            {"action": "next"},
        ),
    }
    print(f"code: {ARGS.repo}  rounds: {ARGS.repeat}")
    for language in ARGS.languages.split(","):
        if language != "en" and "django.middleware.locale.LocaleMiddleware" not in (
            settings.MIDDLEWARE
        ):
            print(f"{language}: this code has no interface languages; skipped")
            continue
        if language not in known:
            continue
        client = Client(HTTP_ACCEPT_LANGUAGE=language)
        client.force_login(expert)
        times = {name: [] for name in pages}
        cpu = {name: [] for name in pages}
        for round_ in range(ARGS.repeat + 5):
            for name, (method, url, data) in pages.items():
                extra = HTMX if method == "post" else {}
                started, cpu_started = time.perf_counter(), time.process_time()
                response = getattr(client, method)(url, data, **extra)
                elapsed = (time.perf_counter() - started) * 1000
                cpu_elapsed = (time.process_time() - cpu_started) * 1000
                assert response.status_code == 200, (name, response.status_code)
                if round_ >= 5:  # the first rounds warm caches and imports
                    times[name].append(elapsed)
                    cpu[name].append(cpu_elapsed)
        for name, values in times.items():
            print(
                f"{language:8} {name:26} wall p50 {statistics.median(values):6.1f} "
                f"p95 {percentile(values, 95):6.1f} ms · CPU p50 "
                f"{statistics.median(cpu[name]):6.1f} p95 "
                f"{percentile(cpu[name], 95):6.1f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
