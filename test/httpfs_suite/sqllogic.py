"""The part of DuckDB's sqllogictest format that httpfs's test files use, parsed into records.

A file is a sequence of records separated by blank lines; `#` lines are comments. Loops are kept as nested
records and unrolled by the runner, which also substitutes `${VAR}` and `__TEST_DIR__`."""

from dataclasses import dataclass, field

# Commands that open a loop, closed by `endloop`; the concurrent ones run their rounds one after another here.
LOOPS = ("loop", "foreach", "concurrentloop", "concurrentforeach")


@dataclass
class Record:
    """One command of a test file: `kind` is its first word (statement, query, require, loop, ...)."""

    kind: str
    args: list
    line: int
    sql: str = ""
    expected: list = field(default_factory=list)  # lines after `----`
    has_expected: bool = False
    body: list = field(default_factory=list)  # records inside a loop


def _blocks(lines: list[str]):
    """(first line number, lines) of each blank-line separated block, comments dropped."""
    block, start = [], 0
    for number, line in enumerate(lines, 1):
        if line.strip() == "":
            if block:
                yield start, block
            block = []
            continue
        if not block and line.startswith("#"):
            continue
        if not block:
            start = number
        block.append(line)
    if block:
        yield start, block


def _commands(lines: list[str]):
    """Split a block into records: a statement/query takes the whole rest of the block, other commands
    (require, set, mode, loop, ...) take one line, so that a block may hold several of them."""
    for start, block in _blocks(lines):
        index = 0
        while index < len(block):
            if block[index].startswith("#"):
                index += 1
                continue
            words = block[index].split()
            kind = words[0]
            if kind in ("statement", "query"):
                rest = block[index + 1 :]
                record = Record(kind, words[1:], start + index)
                if "----" in rest:
                    split = rest.index("----")
                    record.sql = "\n".join(rest[:split])
                    record.expected = rest[split + 1 :]
                    record.has_expected = True
                else:
                    record.sql = "\n".join(rest)
                yield record
                break
            yield Record(kind, words[1:], start + index)
            index += 1


def parse(text: str) -> list[Record]:
    """The file's records, loops (loop/foreach/concurrentloop ... endloop) nested."""
    stack = [[]]
    openers = []
    for record in _commands(text.splitlines()):
        if record.kind in LOOPS:
            openers.append(record)
            stack.append([])
        elif record.kind == "endloop":
            if not openers:
                raise ValueError(f"line {record.line}: endloop without loop")
            opener = openers.pop()
            opener.body = stack.pop()
            stack[-1].append(opener)
        else:
            stack[-1].append(record)
    if openers:
        raise ValueError(f"line {openers[-1].line}: loop without endloop")
    return stack[0]


def loop_values(record: Record) -> tuple[str, list[str]]:
    """The loop variable and the values it takes: `loop i 0 10` counts 0..9, `foreach v a b c` lists them."""
    name, *rest = record.args
    if record.kind in ("loop", "concurrentloop"):
        return name, [str(i) for i in range(int(rest[0]), int(rest[1]))]
    return name, rest
