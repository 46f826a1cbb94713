"""What a Context field may name, and how each is checked: the search backends and their controls,
citation styles, report styles, model prices, GGUF model files. Below the configuration, which
validates with them; above only the text utilities."""
