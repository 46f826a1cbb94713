"""Context's pydantic schemas are made once and are pydantic's own: LangGraph's server asks for
the context's JSON schema at the start of every run (to filter the run's context by it), and
Studio shows it as the assistant's settings."""

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

from deepresearch.config import Context
from deepresearch.graphs.deep import build


def schemas(graph):
    return [
        TypeAdapter(Context).json_schema(),
        TypeAdapter(Context).json_schema(mode="serialization"),
        graph.get_context_jsonschema(),
        TypeAdapter(list[Context]).json_schema(),
        TypeAdapter(dict[str, Context | None]).json_schema(mode="serialization"),
    ]


def test_the_schemas_kept_are_the_schemas_pydantic_makes(monkeypatch):
    graph = build()
    kept, again = schemas(graph), schemas(graph)
    assert TypeAdapter(Context).validate_python({"model": "openai:x", "max_sections": 3}) == Context(
        model="openai:x", max_sections=3
    )
    monkeypatch.delattr(Context, "__get_pydantic_core_schema__")  # pydantic's own, made each time
    monkeypatch.delattr(Context, "__get_pydantic_json_schema__")
    assert kept == again == schemas(graph)
    assert kept[0]["properties"]["max_sections"]["description"]  # the fields' descriptions, for Studio


def test_the_schemas_are_made_once_and_a_callers_edit_stays_its_own(monkeypatch):
    from pydantic._internal import _generate_schema

    class Counting(GenerateJsonSchema):
        made = 0

        def dataclass_schema(self, schema):
            Counting.made += 1
            return super().dataclass_schema(schema)

    made = []
    original = _generate_schema.GenerateSchema._dataclass_schema
    monkeypatch.setattr(
        _generate_schema.GenerateSchema,
        "_dataclass_schema",
        lambda self, cls, origin: made.append(cls) or original(self, cls, origin),
    )
    first = TypeAdapter(Context).json_schema(schema_generator=Counting)
    first["properties"].clear()
    first["title"] = "edited"
    later = [TypeAdapter(Context).json_schema(schema_generator=Counting) for _ in range(3)]
    assert Counting.made == 1 and made.count(Context) <= 1
    assert later[0] == later[2] and later[0]["title"] == "Context" and "model" in later[0]["properties"]
