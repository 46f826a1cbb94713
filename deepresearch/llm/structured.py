"""JSON out of a model's reply, repaired where the repair is unambiguous.

Small and local models answer a structured call in ways a strict parser refuses. What is
read here, in order:

1. the JSON object: from a fenced block, or the first object in text around it; a reply
   cut short (at its cap) is closed after its last complete member (a half-written value
   is dropped, never completed by guessing);
2. known wrong field names: another case or separator (`researchComplete`,
   `Research Complete`), singular for plural, or a unique shortening (`gaps` for
   `outstanding_gaps`);
3. values of a near type: a one-item list where one item is expected, one item where a list
   is expected, a number where text is expected (text where a number is expected is
   pydantic's own lax conversion), a bare list where the schema has exactly one list field.

Anything else is a validation error: the caller retries once showing it, then the node
falls back (deepresearch.llm.calls).
"""

from __future__ import annotations

import functools
import json
import re
import types
import typing
from typing import TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCED = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_decoder = json.JSONDecoder(strict=False)  # llama.cpp may emit raw control characters in strings


def extract_json(text: str) -> dict | list:
    """The JSON object (or list) in a reply; ValueError when there is none."""
    text = text.strip()
    blocks = [b.strip() for b in _FENCED.findall(text)]
    if "```" in text and not blocks:  # a fence opened and never closed: a reply cut short
        blocks = [text.split("```", 1)[1].removeprefix("json").removeprefix("JSON").strip()]
    for candidate in blocks + [text]:
        found = _first_value(candidate)
        if found is not None:
            return found
    raise ValueError("no JSON object in the reply")


def _first_value(text: str) -> dict | list | None:
    """The first object (or list of objects) in `text`, whole or cut short at its end."""
    for m in re.finditer(r"[{\[]", text):
        try:
            value, _ = _decoder.raw_decode(text, m.start())
        except ValueError:
            value = close_truncated(text[m.start() :])
        if isinstance(value, dict) and value or (isinstance(value, list) and value and isinstance(value[0], dict)):
            return value
    return None


def close_truncated(text: str) -> dict | list | None:
    """A JSON text cut short, ended after its last complete member and closed (None: it was
    not cut short, or no prefix of it closes into a value)."""
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []  # (end of a prefix, the closers it needs)
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
            cuts.append((i + 1, "".join(reversed(stack))))  # an empty container so far
        elif ch in "}]":
            if not stack:
                return None
            stack.pop()
            cuts.append((i + 1, "".join(reversed(stack))))
            if not stack:
                return None  # it ends here: not cut short (the caller's parser decides)
        elif ch == ",":
            cuts.append((i, "".join(reversed(stack))))  # everything before the comma is whole
    for end, closers in reversed(cuts[-200:]):
        try:
            value = json.loads(text[:end] + closers, strict=False)
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            return value
    return None


# --- repairs against the schema -------------------------------------------------------


def _words(name: str) -> list[str]:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]


def _norm(name: str) -> str:
    return "".join(_words(name))


def _singular(s: str) -> str:
    return s[:-1] if s.endswith("s") else s


def _field_for(key: str, free: list[str]) -> str | None:
    """The one field `key` stands for, among the fields not given yet (None: none, or not one)."""
    n = _norm(key)
    for same in (lambda f: _norm(f) == n, lambda f: _singular(_norm(f)) == _singular(n)):
        found = [f for f in free if same(f)]
        if len(found) == 1:
            return found[0]
        if found:
            return None
    words = {_singular(w) for w in _words(key)}
    found = [f for f in free if words and words <= {_singular(w) for w in _words(f)}]
    return found[0] if len(found) == 1 else None


def _unwrap(ann):
    """(the annotation without None, whether it is a list, the item or value type)."""
    if typing.get_origin(ann) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        if len(args) == 1:
            ann = args[0]
    if typing.get_origin(ann) in (list, typing.List):  # noqa: UP006
        items = typing.get_args(ann)
        return True, items[0] if items else typing.Any
    return False, ann


def _is_model(t) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)


def _fix_value(value, ann):
    is_list, inner = _unwrap(ann)
    if is_list:
        if not isinstance(value, list) and value is not None:
            value = [value]  # one item where a list is expected
        return [_fix_value(v, inner) for v in value] if isinstance(value, list) else value
    if isinstance(value, list) and len(value) == 1:
        value = value[0]  # a one-item list where one item is expected
    if _is_model(inner) and isinstance(value, dict):
        return repair(value, inner)
    if inner is str and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def repair(data, schema: type[BaseModel]):
    """`data` with the unambiguous repairs for `schema` made (anything else is left as it is)."""
    fields = schema.model_fields
    if isinstance(data, list):  # a bare list: the value of the schema's one list field
        lists = [n for n, f in fields.items() if _unwrap(f.annotation)[0]]
        if len(lists) != 1:
            return data
        data = {lists[0]: data}
    if not isinstance(data, dict):
        return data
    out = {k: v for k, v in data.items() if k in fields}
    for key, value in data.items():
        if key in fields:
            continue
        name = _field_for(key, [f for f in fields if f not in out])
        if name is not None:
            out[name] = value
        else:
            out[key] = value  # left for the schema to accept or refuse
    return {k: _fix_value(v, fields[k].annotation) if k in fields else v for k, v in out.items()}


def validate(data, schema: type[T]) -> T:
    """`data` as `schema`: as it is, else repaired (the first error when neither validates)."""
    try:
        return schema.model_validate(data)
    except ValidationError as first:
        try:
            return schema.model_validate(repair(data, schema))
        except ValidationError:
            raise first from None


_PLAIN_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def parse_json_object(text: str) -> dict:
    """The object from its first `{` to its last `}`, unrepaired: how the embedded model's
    grammar-constrained replies are read (its behaviour stays what it was)."""
    text = _PLAIN_FENCE.sub("", text.strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    return json.loads(text[start : end + 1], strict=False)  # llama.cpp may emit raw control characters


def parse(text: str, schema: type[T]) -> T:
    """The reply `text` as `schema` (ValueError or ValidationError when it cannot be read)."""
    return validate(extract_json(text), schema)


# --- what a structured call sends of its schema -------------------------------------


@functools.cache
def schema_forms(schema: type[BaseModel]) -> dict[str, str]:
    """What a structured call sends of `schema`, as JSON text: worked out once per schema
    class (pydantic builds the JSON schema anew on every `model_json_schema()`, a few ms)."""
    plain = schema.model_json_schema()
    return {
        "plain": json.dumps(plain),
        "compact": json.dumps(plain, separators=(",", ":")),
        "strict": json.dumps(strict_schema(plain)),
        "grammar": json.dumps(_strip_lengths(plain)),
    }


def schema_instructions(schema: type[BaseModel]) -> str:
    return (
        "Reply with one JSON object, and nothing else, that matches this JSON schema:\n"
        + schema_forms(schema)["compact"]
    )


def field_guide(schema: type[BaseModel]) -> str:
    """Plain words for the fields of `schema`: small models copy a schema dump instead of
    filling it in, while constrained decoding already enforces the structure."""
    parts = []
    for name, f in schema.model_fields.items():
        text = f'"{name}"' + (f" ({f.description})" if f.description else "")
        inner = getattr(f.annotation, "__args__", None)
        if inner and isinstance(inner[0], type) and issubclass(inner[0], BaseModel):
            text += ", a list; each item has " + ", ".join(f'"{n}"' for n in inner[0].model_fields)
        parts.append(text)
    return "Reply in JSON with: " + "; ".join(parts) + "."


def strict_schema(schema):
    """OpenAI's strict mode: every object closed and every property required."""
    if isinstance(schema, dict):
        out = {k: strict_schema(v) for k, v in schema.items() if k != "default"}
        if out.get("type") == "object" and "properties" in out:
            out["additionalProperties"] = False
            out["required"] = list(out["properties"])
        return out
    if isinstance(schema, list):
        return [strict_schema(v) for v in schema]
    return schema


def _strip_lengths(schema):
    """llama.cpp turns maxLength into a grammar too large to build: leave lengths to validation."""
    if isinstance(schema, dict):
        return {k: _strip_lengths(v) for k, v in schema.items() if k != "maxLength"}
    if isinstance(schema, list):
        return [_strip_lengths(v) for v in schema]
    return schema
