from django.db.models import Count
from django.shortcuts import get_object_or_404, render

from .browse import ItemFilterForm, browse_dimensions, browse_items, item_page
from .models import Benchmark, Item
from .roles import Role, role_required


def home(request):
    benchmarks = Benchmark.objects.annotate(item_count=Count("items")).order_by("name")
    return render(request, "benchmark/home.html", {"benchmarks": benchmarks})


@role_required(*Role.values)
def item_list(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    form = ItemFilterForm(benchmark, browse_dimensions(benchmark), request.GET)
    result = browse_items(benchmark, form, request.GET.get("page"))
    template = "benchmark/item_list.html"
    if request.htmx and not request.htmx.boosted:
        template += "#results"
    return render(
        request, template, {"benchmark": benchmark, "form": form, "result": result}
    )


@role_required(*Role.values)
def item_detail(request, slug, item_id):
    item = get_object_or_404(
        Item.objects.select_related("benchmark"), benchmark__slug=slug, pk=item_id
    )
    return render(request, "benchmark/item_detail.html", item_page(item))
