"""Benchmarks of deepresearch against a local stub of the OpenAI chat API: `python -m bench`."""
