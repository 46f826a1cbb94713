"""The web page served by the LangGraph server (`app`), the report's safe HTML (`render`) and
its exports (`export`)."""
