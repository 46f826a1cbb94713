"""Pure text utilities, the bottom layer: sentences and words, folding and stemming, safe text for
Markdown and HTML, URLs, and how well a passage supports a sentence. Nothing here imports the rest
of deepresearch."""
