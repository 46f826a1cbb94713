"""The graphs: `iterative` (one research loop) and `deep` (outline, sections, synthesis)."""
