"""The construction demos `make run` loads: IndustryBench's pipeline on simulated
sources and a simulated web (`industrial`, `search`), and LPFQA's forum pipeline
(`forum`). Their own room, apart from the code that builds real benchmarks."""
