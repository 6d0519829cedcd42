"""`python3 -m zepp.loads`: convert an engine's expert load statistics (SGLang recorder .pt or
JSON, vLLM load window .pt) to SGLang statistics JSON (zepp/_loads.py)."""

import sys

from ._loads import main, read_expert_load  # noqa: F401

if __name__ == "__main__":
    sys.exit(main())
