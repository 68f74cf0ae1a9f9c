from django.db.models import Count
from django.shortcuts import render

from .models import Benchmark


def home(request):
    benchmarks = Benchmark.objects.annotate(item_count=Count("items")).order_by("name")
    return render(request, "benchmark/home.html", {"benchmarks": benchmarks})
