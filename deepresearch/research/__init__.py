"""The research logic, apart from the shell (cli, runner, transport): what a question is about
(`concepts`, `question`, `subjects`), the hop to what it points at (`bridges`), the answer
paragraph (`answer`), comparison tables (`compare`), charts (`charts`, `chart_render`,
`chart_critique`) and provenance (`provenance`, `provenance_view`)."""
