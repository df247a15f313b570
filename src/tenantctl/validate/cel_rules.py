"""``x-kubernetes-validations``: compile each CEL rule once, evaluate it as the apiserver does on create.

A rule is compiled when its CRD version's validator is first built; compiling also checks that every
function it calls exists here (cel-rust only finds out when a call runs, so a rule whose failing branch
calls a missing function would otherwise pass unnoticed). A rule that cannot be compiled is reported as
an error by the validator, never skipped. Transition rules (those reading ``oldSelf``) are compiled,
counted and not evaluated: there is no old object on create.

Evaluation binds ``self`` to the value at the rule's schema node, only when that value is present (the
jsonschema walk only descends into present values), after CRD defaults were applied.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cel

from tenantctl.validate.cel_library import KUBERNETES_FUNCTIONS, NAMESPACES, is_provided
from tenantctl.validate.paths import FieldPath, parse_field_path, short_value

__all__ = ["CompiledRule", "RuleCompileError", "RuleFailure", "compile_rule"]

_REASONS = {
    "FieldValueInvalid": "Invalid value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
}
_TRANSITION_VARIABLE = "oldSelf"
# CEL's type denotations (`type(self) == string` on an int-or-string) read as identifiers to cel-rust.
_TYPE_NAMES = frozenset({"bool", "int", "uint", "double", "string", "bytes", "list", "map", "null_type", "type"})
_RULE_VARIABLES = frozenset({"self", _TRANSITION_VARIABLE}) | NAMESPACES | _TYPE_NAMES
# Comprehension macros bind a variable (two for the two-variable forms); cel reports them as variables.
_MACRO_BINDINGS = re.compile(
    r"\.(?:all|exists|exists_one|existsOne|map|filter|transformList|transformMap|transformMapEntry)"
    r"\(\s*([A-Za-z_]\w*)\s*,(?:\s*([A-Za-z_]\w*)\s*,)?"
)


class RuleCompileError(ValueError):
    """A rule this validator cannot check; the message says which rule and why."""


@dataclass(frozen=True)
class RuleFailure:
    """A rule that did not hold: where (relative to the rule's node) and the apiserver-style message."""

    field_path: FieldPath
    message: str


@dataclass(frozen=True, eq=False)
class CompiledRule:
    """One ``x-kubernetes-validations`` entry, ready to run against values at its schema node."""

    rule: str
    program: cel.Program
    message: str | None
    message_expression: cel.Program | None
    field_path: FieldPath
    reason: str
    transition: bool
    numeric_double: bool

    def check(self, value: Any, old: Any = None) -> RuleFailure | None:
        """None when the rule holds for `value` (``self``, and ``oldSelf`` = `old` for a transition rule)."""
        bound = float(value) if self.numeric_double and type(value) is int else value
        old_bound = float(old) if self.numeric_double and type(old) is int else old
        try:
            result = _execute(self.program, bound, old_bound if self.transition else None)
        except Exception as exc:  # every CEL runtime error is a failed rule, as in the apiserver
            problem = f"rule `{self.rule}` could not be evaluated: {_error_text(exc)}"
            return RuleFailure(
                self.field_path,
                f"{self.reason}: {self.message} ({problem}; self = {short_value(value)})"
                if self.message
                else f"{self.reason}: {problem} (self = {short_value(value)})",
            )
        if result is True:
            return None
        if result is not False:
            return RuleFailure(
                self.field_path,
                f"{self.reason}: rule `{self.rule}` returned {short_value(result)}, not a bool",
            )
        return RuleFailure(
            self.field_path,
            f"{self.reason}: {self._message(bound)} (rule `{self.rule}` failed with self = {short_value(value)})",
        )

    def _message(self, bound: Any) -> str:
        if self.message_expression is not None:
            try:
                text = _execute(self.message_expression, bound)
            except Exception:  # the apiserver falls back to `message` too
                text = None
            if isinstance(text, str) and text.strip():
                return text
        return self.message or f"failed rule: {self.rule}"


def compile_rule(spec: Mapping[str, Any], *, numeric_double: bool = False) -> CompiledRule:
    """Compile one validation entry (``rule``, ``message``, ``messageExpression``, ``fieldPath``, ``reason``)."""
    rule = spec.get("rule")
    if not isinstance(rule, str) or not rule.strip():
        raise RuleCompileError(f"validation entry without a rule: {short_value(dict(spec))}")
    program = _compile(rule, "rule")
    message_expression = None
    if isinstance(spec.get("messageExpression"), str):
        message_expression = _compile(spec["messageExpression"], "messageExpression")
    field_path: FieldPath = ()
    if isinstance(spec.get("fieldPath"), str) and spec["fieldPath"]:
        parsed = parse_field_path(spec["fieldPath"])
        if parsed is None:
            raise RuleCompileError(f"rule `{rule}`: fieldPath {spec['fieldPath']!r} is not a field path")
        field_path = parsed
    reason = spec.get("reason") or "FieldValueInvalid"
    if reason not in _REASONS:
        raise RuleCompileError(f"rule `{rule}`: unknown reason {reason!r}")
    return CompiledRule(
        rule=rule,
        program=program,
        message=spec.get("message") if isinstance(spec.get("message"), str) else None,
        message_expression=message_expression,
        field_path=field_path,
        reason=_REASONS[reason],
        transition=_TRANSITION_VARIABLE in program.variables(),
        numeric_double=numeric_double,
    )


def _compile(source: str, what: str) -> cel.Program:
    try:
        program = cel.compile(source)
    except Exception as exc:  # cel raises ValueError or RuntimeError for syntax errors
        raise RuleCompileError(f"{what} `{source}` does not compile: {_error_text(exc)}") from None
    missing = sorted(f for f in program.functions() if not is_provided(f))
    if missing:
        raise RuleCompileError(
            f"{what} `{source}` calls {', '.join(missing)}, which tenantctl's CEL environment does not "
            "provide (add it to tenantctl.validate.cel_library)"
        )
    bound = {name for match in _MACRO_BINDINGS.finditer(source) for name in match.groups() if name}
    unknown = sorted(set(program.variables()) - _RULE_VARIABLES - bound)
    if unknown:
        raise RuleCompileError(f"{what} `{source}` refers to undeclared variable(s) {', '.join(unknown)}")
    return program


_local = threading.local()


def _context() -> cel.Context:
    # Building a context with ~100 functions costs ~20 µs; one per thread is reused, rebinding `self`.
    context: cel.Context | None = getattr(_local, "context", None)
    if context is None:
        context = cel.Context(functions=dict(KUBERNETES_FUNCTIONS))
        _local.context = context
    return context


def _execute(program: cel.Program, value: Any, old: Any = None) -> Any:
    context = _context()
    context.add_variable("self", value)
    if old is not None:
        context.add_variable(_TRANSITION_VARIABLE, old)
    return program.execute(context)


class _QuietFunctionFailures(logging.Filter):
    """cel logs a warning for every raising Python function; the raised error already says the same.

    Kubernetes functions raise on bad input by design (``quantity('lots')``), and the failed rule is
    reported as a Problem; without this filter each one would also print to stderr.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Python function ")


logging.getLogger("cel").addFilter(_QuietFunctionFailures())


def _error_text(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"no such key: {exc.args[0]}" if exc.args else "no such key"
    text = str(exc).split(". Check ", 1)[0]
    return text.replace("\n", " ").strip()
