"""Fail on module-level mutable state in traces/ and inspector/ (issue 21).

A module-level dict, list, set, lock, pool or object instance is state shared by every
request, thread and test of the process: it outlives a test, hides from the app's
lifecycle and is reset only by reaching into a module. State lives in a named store
(traces/stores.py) owned by the app config, which tests reset with one fixture. This
checker keeps new globals out:

    python3 scripts/check_module_state.py [PATH ...]    # default: traces inspector

(traces/core is left out: see EXCLUDED_TREES for why.)

It reads the source with `ast` only (no Django, no imports of ours), so it takes well
under a second. It exits 1 and prints `path:line: name ...` for each module-level
assignment (plain, annotated, augmented; inside module-level if/try/with blocks too)
whose value is mutable, and for each `global` statement (a function rebinding a module
name is module state whatever the value). Mutable means: a list, dict or set literal or
comprehension, a call of a mutable constructor (dict, list, set, defaultdict, deque,
Counter, the weak containers, locks, events, semaphores, executors, ...), or of any class
that is not known to be immutable (a capitalised callee is taken for a class). Allowed:
values that are immutable (tuples of immutables, frozenset, str, numbers, bytes,
MappingProxyType, instances of frozen dataclasses, NamedTuples and enums of the scanned
tree), module loggers, and the (path, name) pairs of ALLOWED below, each with its reason.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ROOTS = ("traces", "inspector")
# Migrations are Django's generated history: their operations and dependencies are class
# attributes read once by the migration loader.
EXCLUDED_DIRS = frozenset({"migrations", "__pycache__"})
# Folders left out, and why.
EXCLUDED_TREES = {
    "traces/core": (
        "the pure core has no app config to own a store (no Django, by contract), and its "
        "~60 module-level values are constant tables (some reach JSON and templates as "
        "dicts), format and rule registries filled at import, memo caches of pure "
        "functions and the process-wide gc switch (gcpause): a task of its own"
    ),
}
# Files that are configuration by design, read by Django once at start-up.
ALLOWED_FILES = {
    "inspector/settings.py": "Django settings: a module of configuration values by design",
}
# (path, name): why this module-level binding is allowed.
_URLS = "Django's URL convention: a list read once by the resolver"
ALLOWED = {
    ("traces/urls.py", "urlpatterns"): _URLS,
    ("traces/capture/urls.py", "urlpatterns"): _URLS,
    ("traces/live/urls.py", "urlpatterns"): _URLS,
    ("traces/pages/account_urls.py", "urlpatterns"): _URLS,
    ("traces/pages/rule_urls.py", "urlpatterns"): _URLS,
    ("traces/pages/team_urls.py", "urlpatterns"): _URLS,
    ("inspector/urls.py", "urlpatterns"): _URLS,
    ("traces/capture/forward_addon.py", "addons"): (
        "mitmproxy's script convention: the list of addons mitmdump reads once on loading it"
    ),
    ("traces/routing.py", "websocket_urlpatterns"): "Channels' URL convention, read once",
    ("traces/templatetags/inspector.py", "register"): (
        "Django's template library: filled at import by its decorators, read only after"
    ),
    ("inspector/asgi.py", "django_asgi_app"): (
        "the ASGI handler, made once at start-up and wrapped by `application`"
    ),
    ("inspector/asgi.py", "application"): "the ASGI entry point daphne imports by name",
}

# Callees whose result is mutable, matched on the last part of the dotted name.
MUTABLE_CALLS = frozenset(
    {
        "dict",
        "list",
        "set",
        "bytearray",
        "defaultdict",
        "OrderedDict",
        "deque",
        "Counter",
        "ChainMap",
        "WeakValueDictionary",
        "WeakKeyDictionary",
        "WeakSet",
        "Lock",
        "RLock",
        "Event",
        "Condition",
        "Semaphore",
        "BoundedSemaphore",
        "Barrier",
        "Queue",
        "ThreadPoolExecutor",
        "ProcessPoolExecutor",
        "local",
        "fromkeys",
        "copy",
        "deepcopy",
    }
)
# Callees whose result is immutable (or a type, not an instance), by dotted name or its
# last part.
IMMUTABLE_CALLS = frozenset(
    {
        "tuple",
        "frozenset",
        "str",
        "int",
        "float",
        "complex",
        "bool",
        "bytes",
        "range",
        "MappingProxyType",
        "Path",
        "PurePath",
        "PurePosixPath",
        "Decimal",
        "Fraction",
        "timedelta",
        "date",
        "datetime",
        "time",
        "timezone",
        "UUID",
        "TypeVar",
        "ParamSpec",
        "TypeVarTuple",
        "NewType",
        "NamedTuple",
        "namedtuple",
        "TypedDict",
        "Enum",
        "IntEnum",
        "StrEnum",
        "Flag",
        "IntFlag",
        "object",
        "compile",
    }
)
# Calls allowed by rule, with the reason.
ALLOWED_CALLS = {
    "logging.getLogger": "a module logger: Python's logging convention, configured by settings",
    "getLogger": "a module logger: Python's logging convention, configured by settings",
}


def dotted(node: ast.AST) -> str:
    """`a.b.c` for a Name/Attribute chain; "" for anything else (a call's result, ...)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def immutable_classes(trees: Iterable[ast.Module]) -> frozenset[str]:
    """Names of the classes of the scanned tree whose instances cannot change: frozen
    dataclasses, NamedTuples and enums."""
    found: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {dotted(base).rsplit(".", 1)[-1] for base in node.bases}
            if bases & {"NamedTuple", "Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}:
                found.add(node.name)
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and dotted(decorator.func).endswith("dataclass"):
                    for keyword in decorator.keywords:
                        if keyword.arg == "frozen" and getattr(keyword.value, "value", False):
                            found.add(node.name)
    return frozenset(found)


def mutable_kind(value: ast.AST, immutable: frozenset[str]) -> str | None:
    """What makes this value mutable ("a dict literal", "a call of Lock", ...), or None."""
    if isinstance(value, ast.List | ast.ListComp):
        return "a list"
    if isinstance(value, ast.Dict | ast.DictComp):
        return "a dict"
    if isinstance(value, ast.Set | ast.SetComp):
        return "a set"
    if isinstance(value, ast.Tuple):
        for element in value.elts:
            kind = mutable_kind(element, immutable)
            if kind:
                return f"a tuple holding {kind}"
        return None
    if isinstance(value, ast.BinOp):
        if isinstance(value.op, ast.Add | ast.Mult):  # [..] + x, x * [..]: a list
            return mutable_kind(value.left, immutable) or mutable_kind(value.right, immutable)
        # x | {..}, x - {..}: the left operand's type (a frozenset stays one).
        return mutable_kind(value.left, immutable)
    if isinstance(value, ast.BoolOp):
        for operand in value.values:
            kind = mutable_kind(operand, immutable)
            if kind:
                return kind
        return None
    if isinstance(value, ast.IfExp):
        return mutable_kind(value.body, immutable) or mutable_kind(value.orelse, immutable)
    if isinstance(value, ast.Await):
        return mutable_kind(value.value, immutable)
    if isinstance(value, ast.Call):
        name = dotted(value.func)
        last = name.rsplit(".", 1)[-1]
        if name in ALLOWED_CALLS:
            return None
        if last in MUTABLE_CALLS:
            return f"a call of {name}"
        if name in IMMUTABLE_CALLS or last in IMMUTABLE_CALLS or last in immutable:
            return None
        if last[:1].isupper():
            return f"an instance of {name}"
        return None
    return None


def targets(node: ast.AST) -> Iterator[str]:
    """The names one assignment target binds (tuple unpacking included)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Tuple | ast.List):
        for element in node.elts:
            yield from targets(element)
    elif isinstance(node, ast.Starred):
        yield from targets(node.value)


def module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run at import: the module's own and those of its top-level
    if/try/with/for/while blocks (not the bodies of functions or classes)."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If | ast.For | ast.AsyncFor | ast.While):
            yield from module_statements(statement.body)
            yield from module_statements(statement.orelse)
        elif isinstance(statement, ast.With | ast.AsyncWith):
            yield from module_statements(statement.body)
        elif isinstance(statement, ast.Try | ast.TryStar):
            yield from module_statements(statement.body)
            for handler in statement.handlers:
                yield from module_statements(handler.body)
            yield from module_statements(statement.orelse)
            yield from module_statements(statement.finalbody)


def problems(tree: ast.Module, immutable: frozenset[str]) -> Iterator[tuple[int, str, str]]:
    """(line, name, why) for each module-level mutable binding and `global` statement."""
    for statement in module_statements(tree.body):
        if isinstance(statement, ast.Assign):
            kind = mutable_kind(statement.value, immutable)
            if kind:
                for target in statement.targets:
                    for name in targets(target):
                        yield statement.lineno, name, f"is bound to {kind}"
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            kind = mutable_kind(statement.value, immutable)
            if kind:
                for name in targets(statement.target):
                    yield statement.lineno, name, f"is bound to {kind}"
        elif isinstance(statement, ast.AugAssign):
            for name in targets(statement.target):
                yield statement.lineno, name, "is changed in place at import"
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            for name in node.names:
                yield node.lineno, name, "is rebound by a `global` statement"


def python_files(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_file():
            yield path
            continue
        for file in sorted(path.rglob("*.py")):
            if EXCLUDED_DIRS.intersection(file.relative_to(path).parts):
                continue
            if any(shown(file).startswith(f"{tree}/") for tree in EXCLUDED_TREES):
                continue
            yield file


def shown(path: Path) -> str:
    """The path as the allow-lists spell it: relative to the checkout when inside it."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def check(paths: Iterable[Path]) -> tuple[list[str], set[tuple[str, str]]]:
    """One `path:line: name why` line per problem found under the paths, and the
    entries of ALLOWED that were used."""
    parsed = [
        (file, ast.parse(file.read_text(), filename=str(file))) for file in python_files(paths)
    ]
    immutable = immutable_classes(tree for _, tree in parsed)
    found = []
    used: set[tuple[str, str]] = set()
    for file, tree in parsed:
        where = shown(file)
        if where in ALLOWED_FILES:
            continue
        for line, name, why in problems(tree, immutable):
            if (where, name) in ALLOWED:
                used.add((where, name))
            else:
                found.append(f"{where}:{line}: {name} {why} (module-level mutable state)")
    return found, used


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or [ROOT / root for root in DEFAULT_ROOTS]
    found, used = check(paths)
    if not argv:  # the whole tree: an entry that allows nothing is stale
        found += [
            f"{path}: {name} is allowed in {Path(__file__).name} but bound to nothing "
            "mutable there (remove the entry)"
            for path, name in sorted(set(ALLOWED) - used)
        ]
    for line in found:
        print(line)
    if found:
        print(
            f"{len(found)} problem(s): keep state in a store (traces/stores.py), make a "
            "constant immutable (tuple, frozenset, MappingProxyType), or allow-list it in "
            "scripts/check_module_state.py with a reason.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
