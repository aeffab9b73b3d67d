"""`python -m bench run SUITE ...` and `python -m bench report RESULTS...`: bench/runner.py says more."""

from bench.runner import main

main()
