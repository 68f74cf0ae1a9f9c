from judging.evaluation.urls import urlpatterns as evaluation_urls
from judging.interop.urls import urlpatterns as interop_urls
from judging.labelling.urls import urlpatterns as labelling_urls
from judging.leaderboard.urls import urlpatterns as leaderboard_urls
from judging.llm.urls import urlpatterns as llm_urls
from judging.robustness.urls import urlpatterns as robustness_urls
from judging.runs.urls import urlpatterns as run_urls
from judging.translation.urls import urlpatterns as translation_urls

app_name = "judging"

urlpatterns = [
    *llm_urls,
    *labelling_urls,
    *translation_urls,
    *evaluation_urls,
    *leaderboard_urls,
    *interop_urls,
    *robustness_urls,
    *run_urls,
]
