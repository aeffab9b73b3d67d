"""Old spelling of `python -m bench report`: bench/summarize.py RESULTS... [--compare] (bench/report.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # runs as a script, not only with -m

from bench.report import main  # noqa: E402

if __name__ == "__main__":
    main()
