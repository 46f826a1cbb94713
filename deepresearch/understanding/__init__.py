"""Reading the question once: the analysis step's machinery. `read` gives a frozen, typed `Analysis`
(subjects, the kind of answer, hops, compared things, aspects, breadth, language) from one of two
readers with one interface: the embedded rules (`embedded/`) or a capable model checked by them
(`model`). Every node reads the analysis instead of parsing the question."""
