"""The agreement reports: judge reliability against people and between judges, and
label consensus (IndustryBench Tables 3-6, 15, 16). `tables.py` builds them from
arrays (pure), `loading.py` reads stored labels and caches built reports,
`views.py` serves their pages and downloads."""
