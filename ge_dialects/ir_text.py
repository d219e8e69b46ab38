"""Reading IR text from users: every mistake is a `ParseError` at a place in the text, never a
traceback or a runaway allocation.

On top of xDSL's parser:
- string literals whose escaped bytes are UTF-8 are strings (xDSL makes them bytes, so a node named
  `/层/relu`, printed as `loc("/\\E5\\B1\\82/relu")`, did not read back);
- `dense<...>` literals are bit-exact, splats stay one element, and sizes are limited
  (`ge.ge_dialects.ge.dense_text`);
- nesting deeper than Python's stack allows ends in "nesting too deep" at the place it happened;
- every operation remembers where it starts, so verifier errors and recursive calls are reported at
  their line (`verify_at_source`).
"""

from __future__ import annotations

import dataclasses
import re

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Input, Span, Token
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind, StringLiteral

from ge.ge_dialects.ge.dense_text import parse_dense_body
from ge.ge_dialects.ge.types import ELEMENT_TYPES
from ge.ge_dialects.ssa_order import first_bad_use

_ELEMENT_TYPE_SET = frozenset(ELEMENT_TYPES.values())
_SIMPLE_TENSOR_TYPE = re.compile(r'tensor<(?:[^<>"{}\n]|<[^<>"{}\n]*>)*>')
"""A tensor type spelled without strings, braces or deeper nesting than `#ge.fmt<...>`: the same
spelling is always the same type, so GeParser parses it once."""


class GeLexer(MLIRLexer):
    """xDSL's lexer, with UTF-8 string literals and a filled-in message for bad `%` names."""

    # One pass over the literal: xDSL's single regex backtracks exponentially on an unterminated
    # literal with long runs of plain characters (with that regex a fuzzed file takes minutes to be refused).
    _plain_run = re.compile(r'[^"\\\n\v\f]*')
    _escape = re.compile(r'\\(?:["nt\\]|[0-9A-Fa-f]{2})')

    def _lex_string_literal(self, start_pos):
        content = self.input.content
        pos = start_pos + 1
        while True:
            run = self._plain_run.match(content, pos)
            assert run is not None, "_plain_run matches the empty string"
            pos = run.end()
            char = content[pos] if pos < len(content) else None
            if char == '"':
                break
            if char == "\\":
                escape = self._escape.match(content, pos)
                if escape is None:
                    raise ParseError(
                        Span(pos, min(pos + 2, len(content)), self.input),
                        'invalid escape in string literal (allowed: \\n \\t \\\\ \\" or two hex digits)',
                    )
                pos = escape.end()
                continue
            end = "the file" if char is None else "its line"
            raise ParseError(
                Span(start_pos, start_pos + 1, self.input), f"string literal is not closed before the end of {end}"
            )
        self.pos = pos + 1
        literal = StringLiteral(start_pos, self.pos, self.input)
        if "\\" not in literal.text:
            return Token(MLIRTokenKind.STRING_LIT, literal)
        try:  # escaped bytes that are UTF-8 make a string; others stay bytes
            literal.bytes_contents.decode("utf-8")
        except UnicodeDecodeError:
            return Token(MLIRTokenKind.BYTES_LIT, literal)
        return Token(MLIRTokenKind.STRING_LIT, literal)

    def _lex_prefixed_ident(self, start_pos):
        try:
            return super()._lex_prefixed_ident(start_pos)
        except ParseError as e:
            sigil = self.input.at(start_pos) or "%"
            following = self.input.at(start_pos + 1)
            got = f"'{following}'" if following and not following.isspace() else "nothing"
            raise ParseError(
                Span(start_pos, start_pos + 1, self.input),
                f"a name after '{sigil}' must be a number or start with a letter "
                f"or one of $._- (ASCII only); got {got}",
            ) from e


class GeParser(Parser):
    """xDSL's parser with GeLexer, bit-exact dense literals, and the start of every operation."""

    def __init__(self, ctx: Context, text: str, name: str = "<unknown>"):
        super().__init__(ctx, text, name)
        self._parser_state = ParserState(GeLexer(Input(text, name)))
        self.op_starts: dict[Operation, int] = {}
        self.value_names: dict[SSAValue, str] = {}  # as written, for messages about uses
        self._types: dict[str, Attribute] = {}  # tensor types by spelling (_SIMPLE_TENSOR_TYPE)
        self._last_token_end = 0

    def _consume_token(self, expected_kind=None):
        token = super()._consume_token(expected_kind)
        self._last_token_end = token.span.end
        return token

    def _register_ssa_definition(self, name, values, span):
        super()._register_ssa_definition(name, values, span)
        for index, value in enumerate(values):
            self.value_names[value] = f"%{name}" if len(values) == 1 else f"%{name}#{index}"

    def parse_operation(self) -> Operation:
        start = self.pos
        op = super().parse_operation()
        self.op_starts[op] = start
        return op

    def _parse_optional_integer_or_float_type(self):
        """Number types outside ge's element types (`i99999`, `f80`, `index`, ...) are refused where
        they are written: xDSL reads them but cannot store or print values of most of them."""
        span = self._current_token.span
        number_type = super()._parse_optional_integer_or_float_type()
        if number_type is not None and number_type not in _ELEMENT_TYPE_SET:
            raise ParseError(span, f"type {span.text} is not supported; element types are {', '.join(ELEMENT_TYPES)}")
        return number_type

    def _parse_optional_builtin_parametrized_type(self):
        token = self._current_token
        if token.kind != MLIRTokenKind.BARE_IDENT:
            return super()._parse_optional_builtin_parametrized_type()
        if token.text == "complex":
            raise ParseError(
                token.span,
                f"complex types are not supported; element types are {', '.join(ELEMENT_TYPES)}",
            )
        if token.text != "tensor":
            return super()._parse_optional_builtin_parametrized_type()
        # A module spells the same few tensor types over and over (twice per op): each spelling is
        # parsed once, then read back from the cache (parsing every spelling is half of parsing a 10k-op chain).
        spelled = _SIMPLE_TENSOR_TYPE.match(self.lexer.input.content, token.span.start)
        if spelled is not None and (known := self._types.get(spelled.group())) is not None:
            self._resume_from(spelled.end())
            return known
        parsed = super()._parse_optional_builtin_parametrized_type()
        if spelled is not None and parsed is not None and self._last_token_end == spelled.end():
            self._types[spelled.group()] = parsed
        return parsed

    def parse_dense_int_or_fp_elements_attr(self, type):
        attr = parse_dense_body(self, type)
        return attr if attr is not None else super().parse_dense_int_or_fp_elements_attr(type)

    def place(self, op: Operation | None, line_offset: int = 0) -> str:
        """`file:line:col` of the operation (or of its closest parsed ancestor; of the file's start when
        there is none)."""
        node: Operation | None = op
        while node is not None and node not in self.op_starts:
            node = node.parent_op()
        start = self.op_starts[node] if node is not None else 0
        return str(Span(start, start + 1, self.lexer.input, line_offset).get_location())


def parse_ir(
    ctx: Context, text: str, source: str, *, implicit_module: bool = True, line_offset: int = 0
) -> tuple[ModuleOp, GeParser]:
    """Parses a module; raises ParseError (with `line_offset` added to its line) for any mistake."""
    parser = GeParser(ctx, text, source)
    try:
        module = parser.parse_module(implicit_module)
    except RecursionError:
        where = parser.pos
        raise ParseError(
            Span(where, where + 1, parser.lexer.input, line_offset),
            "nesting too deep (brackets, regions or types nested beyond what the parser supports)",
        ) from None
    except ParseError as e:
        if line_offset:
            e.span = dataclasses.replace(e.span, line_offset=line_offset)
        raise
    except ValueError as e:  # xDSL's attribute constructors, e.g. a bad integer attribute value
        where = parser.pos
        raise ParseError(Span(where, where + 1, parser.lexer.input, line_offset), _first_line(e)) from None
    return module, parser


class SourceVerifyError(Exception):
    """A verifier error with `file:line:col` of the operation it is about."""


USER_VERIFY_ERRORS = (DiagnosticException, VerifyException, ValueError)
"""What a verifier raises for IR that breaks a rule (ValueError: xDSL's attribute checks); anything
else from a verifier is a compiler bug, left to the tools' internal-error report."""


def verify_at_source(module: ModuleOp, parser: GeParser, line_offset: int = 0) -> None:
    """Verifies `module`, then refuses uses of values where they are not defined (`ssa_order`) and
    recursive calls; errors name the line of the operation."""
    try:
        module.verify()
    except USER_VERIFY_ERRORS as e:
        op = _first_failing_op(module)
        place = parser.place(op, line_offset) if op is not None else parser.lexer.input.name
        located = SourceVerifyError(f"{place}: {_first_line(e)}")
        for note in getattr(e, "__notes__", ()):  # xDSL's annotated IR, for --verify-diagnostics
            located.add_note(note)
        raise located from None
    except RecursionError:
        raise SourceVerifyError(f"{parser.lexer.input.name}: nesting too deep to verify") from None
    bad_use = first_bad_use(module)
    if bad_use is not None:
        name = parser.value_names.get(bad_use.value, "a value")
        defined = bad_use.value.owner
        where = parser.place(defined if isinstance(defined, Operation) else defined.parent_op(), line_offset)
        raise SourceVerifyError(
            f"{parser.place(bad_use.user, line_offset)}: use of {name} {bad_use.reason} (defined at {where})"
        )
    call = recursive_call(module)
    if call is not None:
        callee = call.callee.string_value()
        raise SourceVerifyError(
            f"{parser.place(call, line_offset)}: @{callee} calls itself "
            f"(directly or through other functions); recursion is not supported"
        )


def _first_failing_op(module: ModuleOp) -> Operation | None:
    """The operation whose own checks fail, innermost first (the order xDSL verifies in)."""
    for op in _post_order(module):
        try:
            op.verify(verify_nested_ops=False)
        except USER_VERIFY_ERRORS:
            return op
    return None


def _post_order(root: Operation) -> list[Operation]:
    order: list[Operation] = []
    stack: list[tuple[Operation, bool]] = [(root, False)]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(op)
            continue
        stack.append((op, True))
        children = [child for region in op.regions for block in region.blocks for child in block.ops]
        stack.extend((child, False) for child in reversed(children))
    return order


def recursive_call(module: ModuleOp) -> func.CallOp | None:
    """A `func.call` that can reach its own function again, or None."""
    calls: dict[str, list[func.CallOp]] = {}
    for op in module.walk():
        if isinstance(op, func.CallOp):
            caller = op.parent_op()
            while caller is not None and not isinstance(caller, func.FuncOp):
                caller = caller.parent_op()
            if caller is not None:
                calls.setdefault(caller.sym_name.data, []).append(op)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in calls:
        if state.get(root):
            continue
        stack = [(root, iter(calls.get(root, ())))]
        state[root] = 1
        while stack:
            name, pending = stack[-1]
            call = next(pending, None)
            if call is None:
                state[name] = 2
                stack.pop()
                continue
            callee = call.callee.string_value()
            if state.get(callee) == 1:
                return call
            if not state.get(callee):
                state[callee] = 1
                stack.append((callee, iter(calls.get(callee, ()))))
    return None


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
