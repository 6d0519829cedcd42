"""Adapters that plug Zepp into serving engines (vllm: ZeppEplbPolicy; sglang: ZeppSglangEplb)."""
