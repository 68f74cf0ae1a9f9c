"""The IndustryBench paper's tables and figures, regenerated from the database.

`collect.paper_set` builds every table the reports and the leaderboard already compute
(numbered as the paper numbers them) and the figures drawn from them, with a manifest
of what each was computed on; `figures` draws (pure: numbers in, SVG/PNG out). The
`paper_tables` command writes the set to a folder; the reports page downloads it as
one archive.
"""
