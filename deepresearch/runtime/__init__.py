"""The run's machinery: running a graph (`runner`), checkpointers, the per-thread lock and the OS threads that sync nodes of a served graph run in."""
