"""Gold alignment files: Pharaoh and NAACL (talp), read with explicit indexing and side order.

Each file becomes a ``GoldFile`` of ``GoldLinks`` (``xattn.alignlab.gold``): zero-based
``(src, tgt)`` sure and possible links per sentence pair.

Two file formats are read, both with the indexing and the side order given by the caller,
never guessed (one-based gold read as zero-based is the classic mistake, awesome-align#20;
``indexing_warnings`` says when a reading looks like it):

``"pharaoh"``
    One line per sentence pair, links separated by whitespace: ``i-j`` sure, ``i?j`` possible
    (``ipj`` is read as possible too: lilt/alignment-scripts' ``.talp`` files write it so). An
    empty line is a pair without links (fast_align writes them).
``"naacl"``
    The NAACL 2003 / WPT 2005 shared-task layout ("talp" in some tools), one link per line:
    ``sentence source target [S|P] [confidence]``; the type defaults to S, the confidence is
    read and ignored, blank lines are skipped. Sentence numbers count from ``first_index`` as
    positions do. With ``first_index=1``, position 0 is the NULL word: such links are left
    out and counted (``GoldFile.n_null``).

Input is bounded (``MAX_GOLD_BYTES``, ``MAX_GOLD_PAIRS``, positions up to ``MAX_POSITION``)
and read in linear time; a malformed file raises ``GoldFileError`` listing every problem with
its line number.
"""

from __future__ import annotations

import re

from xattn._checks import check_int, quote
from xattn.alignlab.gold import GoldFile, GoldLinks

__all__ = ["FORMATS", "ORDERS", "MAX_GOLD_BYTES", "MAX_GOLD_PAIRS", "MAX_POSITION",
           "SHOWN_PROBLEMS", "GoldFileError", "read_gold"]

FORMATS = ("pharaoh", "naacl")
ORDERS = ("src-tgt", "tgt-src")   # which side a link names first
MAX_GOLD_BYTES = 2_000_000        # an upload: 10,000 pairs of 20 links fit
MAX_GOLD_PAIRS = 10_000           # sentence pairs in one file
MAX_POSITION = 9_999              # largest position a link may name (4 digits)
SHOWN_PROBLEMS = 20               # problems in ``str(GoldFileError)``; all are in .problems
_PHARAOH_LINK = re.compile(r"([0-9]{1,9})([-?p])([0-9]{1,9})")   # [0-9]: not any Unicode digit
_NUMBER = re.compile(r"[0-9]{1,9}")
_CONFIDENCE = re.compile(r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?")


class GoldFileError(ValueError):
    """A gold alignment file is not valid.

    Attributes
    ----------
    problems : list of str
        Every problem found, each naming its line; ``str(error)`` shows the first
        ``SHOWN_PROBLEMS`` and how many more there are.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        shown = self.problems[:SHOWN_PROBLEMS]
        more = len(self.problems) - len(shown)
        super().__init__("\n".join(shown + ([f"... and {more} more problem"
                                              f"{'' if more == 1 else 's'}."] if more else [])))


def _as_lines(data) -> list[str]:
    if isinstance(data, (bytes, bytearray)):
        if len(data) > MAX_GOLD_BYTES:
            raise GoldFileError([f"The file must be at most {MAX_GOLD_BYTES:,} bytes; received "
                                 f"{len(data):,}."])
        try:
            data = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise GoldFileError([f"The file must be UTF-8 text; byte {err.start:,} is "
                                 f"0x{data[err.start]:02x}."]) from None
    elif not isinstance(data, str):
        raise TypeError(f"data must be str or bytes (the file's contents); received "
                        f"{type(data).__name__}.")
    elif len(data) > MAX_GOLD_BYTES:
        raise GoldFileError([f"The file must be at most {MAX_GOLD_BYTES:,} characters; "
                             f"received {len(data):,}."])
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()                              # the newline that ends the last line
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _position(text: str, first_index: int, what: str, where: str, problems: list) -> int | None:
    value = int(text)
    if value > MAX_POSITION:
        problems.append(f"{where}: {what} {quote(text)} is larger than {MAX_POSITION}.")
        return None
    return value - first_index


def _read_pharaoh(lines: list[str], first_index: int, swap: bool, problems: list) -> list:
    pairs = []
    for n, line in enumerate(lines, start=1):
        sure, possible = set(), set()
        for token in line.split():
            m = _PHARAOH_LINK.fullmatch(token)
            if m is None:
                problems.append(f"line {n}: {quote(token)} is not a link; expected i-j (sure) "
                                "or i?j (possible), i and j whole numbers.")
                continue
            a = _position(m[1], first_index, "position", f"line {n}", problems)
            b = _position(m[3], first_index, "position", f"line {n}", problems)
            if a is None or b is None:
                continue
            if a < 0 or b < 0:
                problems.append(f"line {n}: {quote(token)} names position 0, but positions "
                                "are read as counting from 1. Is the file zero-based?")
                continue
            (sure if m[2] == "-" else possible).add((b, a) if swap else (a, b))
        pairs.append(GoldLinks.from_checked(frozenset(sure), frozenset(possible)))
    return pairs


def _naacl_link(fields: list[str], n: int, first_index: int, problems: list):
    """(sentence, src-or-tgt, tgt-or-src, sure) of one NAACL line, or None after a problem;
    a NULL link gives a position of -1."""
    where = f"line {n}"
    if not 3 <= len(fields) <= 5:
        problems.append(f"{where}: expected 'sentence source target [S|P] [confidence]'; "
                        f"received {len(fields)} fields.")
        return None
    found = len(problems)
    bad = [f for f in fields[:3] if not _NUMBER.fullmatch(f)]
    kind = fields[3] if len(fields) > 3 else "S"
    if bad:
        problems.append(f"{where}: {quote(bad[0])} is not a whole number.")
    if kind not in ("S", "P"):
        problems.append(f"{where}: the link type must be S or P; received {quote(kind)}.")
    if len(fields) == 5 and not _CONFIDENCE.fullmatch(fields[4]):
        problems.append(f"{where}: the confidence must be a number; received "
                        f"{quote(fields[4])}.")
    if len(problems) > found:
        return None
    sentence = int(fields[0]) - first_index
    if not 0 <= sentence < MAX_GOLD_PAIRS:
        problems.append(f"{where}: sentence {fields[0]} does not exist: sentence numbers count "
                        f"from {first_index}, as positions are read, up to "
                        f"{MAX_GOLD_PAIRS - 1 + first_index:,}.")
        return None
    a = _position(fields[1], first_index, "position", where, problems)
    b = _position(fields[2], first_index, "position", where, problems)
    if a is None or b is None:
        return None
    return sentence, a, b, kind == "S"


def _read_naacl(lines: list[str], first_index: int, swap: bool, n_pairs: int | None,
                problems: list) -> tuple[list, int]:
    links: dict[int, tuple[set, set]] = {}
    n_null = 0
    for n, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        link = _naacl_link(fields, n, first_index, problems)
        if link is None:
            continue
        sentence, a, b, is_sure = link
        if n_pairs is not None and sentence >= n_pairs:
            problems.append(f"line {n}: sentence {fields[0]} is past the last of {n_pairs} "
                            "sentence pairs.")
            continue
        if a < 0 or b < 0:                       # only with first_index=1: the NULL word
            n_null += 1
            continue
        sure, possible = links.setdefault(sentence, (set(), set()))
        (sure if is_sure else possible).add((b, a) if swap else (a, b))
    count = n_pairs if n_pairs is not None else max(links, default=-1) + 1
    empty = (frozenset(), frozenset())
    pairs = [GoldLinks.from_checked(*map(frozenset, links.get(k, empty))) for k in range(count)]
    return pairs, n_null


def read_gold(data, *, format: str, first_index: int, order: str,
              n_pairs: int | None = None) -> GoldFile:
    """Read a gold alignment file (see the module docstring for the formats).

    Parameters
    ----------
    data : str or bytes
        The file's contents (bytes are decoded as UTF-8; a BOM is dropped).
    format : {"pharaoh", "naacl"}
    first_index : {0, 1}
        The position of a sentence's first word in the file. No default: say what the file
        uses (awesome-align and fast_align write 0; the NAACL test sets and most gold files 1).
    order : {"src-tgt", "tgt-src"}
        Which side each link names first (Pharaoh files are conventionally "src-tgt").
    n_pairs : int, optional
        NAACL only: the number of sentence pairs (a file lists no line for a pair without
        links, so the last pairs may not show). Default: the largest sentence number.

    Returns
    -------
    GoldFile
        Links converted to zero-based ``(src, tgt)``.

    Raises
    ------
    GoldFileError
        Listing every malformed line (with its number), or a file too large.

    Examples
    --------
    >>> gold = read_gold("1-1 2?3\\n\\n", format="pharaoh", first_index=1, order="src-tgt")
    >>> len(gold), sorted(gold.pairs[0].sure), sorted(gold.pairs[0].possible)
    (2, [(0, 0)], [(0, 0), (1, 2)])
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}; received {quote(format)}.")
    first_index = check_int(first_index, "first_index", minimum=0, maximum=1)
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}; received {quote(order)}.")
    if n_pairs is not None:
        if format != "naacl":
            raise ValueError("n_pairs applies to NAACL files only: a Pharaoh file has one "
                             "line per pair.")
        n_pairs = check_int(n_pairs, "n_pairs", minimum=0, maximum=MAX_GOLD_PAIRS)
    lines, problems, n_null = _as_lines(data), [], 0
    swap = order == "tgt-src"
    if format == "pharaoh":
        if len(lines) > MAX_GOLD_PAIRS:
            raise GoldFileError([f"A Pharaoh file must hold at most {MAX_GOLD_PAIRS:,} lines "
                                 f"(sentence pairs); received {len(lines):,}."])
        pairs = _read_pharaoh(lines, first_index, swap, problems)
    else:
        pairs, n_null = _read_naacl(lines, first_index, swap, n_pairs, problems)
    if problems:
        raise GoldFileError(problems)
    return GoldFile(tuple(pairs), format, first_index, order, n_null)


