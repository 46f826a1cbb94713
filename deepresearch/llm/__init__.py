"""Model plumbing: the model factory and providers, the streamed transport, structured output, reasoning, replies, context fitting, and the budgeted call every node makes (`calls`)."""
