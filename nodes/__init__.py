"""Node functions. A node id `x` lives in `nodes/x.py`, with its prompt and output schema."""
