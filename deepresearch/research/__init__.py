"""The research logic, apart from the shell (cli, runner, transport): what a question is about
(`concepts`, `question`), the hop to what it points at (`bridges`), the answer paragraph
(`answer`) and comparison tables (`compare`)."""
