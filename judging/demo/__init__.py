"""The evaluation demos `make run` loads: simulated runs on the IndustryBench-style
demo benchmark (`runs`) and the LPFQA-style demo benchmark with its runs (`lpfqa`).
A room of their own, over the run kinds, apart from the code that runs real
evaluations."""
