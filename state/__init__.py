"""State schemas, structured-output models, budget accounting and the source registry."""
