"""ONNX's text fields (names, op types, domains, ...) must be UTF-8.

ONNX is proto2, so protobuf does not check them: a field with invalid UTF-8 comes out of Python's
protobuf as `bytes` instead of `str` and travelled into schema lookups and into node names, where
the IR printer failed on it (fuzz ge-translate 1993: a flipped byte in a node name). The model is
refused at load, naming the field. String attribute values (typed bytes in ONNX's schema) are
checked by frontend/validate.py, which names the node and attribute.
"""

from __future__ import annotations

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

_SHOWN_BYTES = 40


def first_non_utf8_field(model: Message) -> str | None:
    """`graph.node[1].name (b'/fc/A\\xffd')` for a text field that is not UTF-8, or None."""
    pending: list[tuple[Message, str]] = [(model, "")]  # no recursion: graphs nest inside attributes
    while pending:
        message, path = pending.pop()
        for field, value in message.ListFields():
            text_field = field.type == FieldDescriptor.TYPE_STRING
            if field.type != FieldDescriptor.TYPE_MESSAGE and not text_field:
                continue  # numbers and tensor bytes: not copied out of the message
            where = f"{path}{field.name}"
            repeated = _is_repeated(field)
            values = list(value) if repeated else [value]
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                for index, child in enumerate(values):
                    suffix = f"[{index}]." if repeated else "."
                    pending.append((child, where + suffix))
                continue
            for index, item in enumerate(values):
                if not _is_utf8(item):
                    place = f"{where}[{index}]" if repeated else where
                    return f"{place} ({_shown(item)})"
    return None


def _is_repeated(field: FieldDescriptor) -> bool:
    repeated = getattr(field, "is_repeated", None)  # protobuf 6+; older versions have only `label`
    return repeated if repeated is not None else field.label == FieldDescriptor.LABEL_REPEATED


def _is_utf8(item: str | bytes) -> bool:
    if isinstance(item, str):
        return True
    try:
        item.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _shown(item: bytes) -> str:
    text = repr(item[:_SHOWN_BYTES])
    return text + "..." if len(item) > _SHOWN_BYTES else text
