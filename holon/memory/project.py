"""Text as the index sees it: NFKC, CJK runs expanded to bigrams, and user queries quoted into safe
FTS5 expressions.

SQLite's unicode61 tokenizer keeps a run of CJK characters (and any Latin glued to it) as one
token, so `学习` would never match inside `机器学习模型`. The projection replaces every CJK run
with its overlapping bigrams plus the run's last character, so any two adjacent characters are a
token, and a single character is the prefix of a token. A query is expanded the same way; the
original text is stored beside the projection and is all a reader ever sees.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, field

from holon.errors import InvalidInput

# Han (with extensions and compatibility ideographs), kana, Hangul, Bopomofo, and the ideographic
# iteration mark and prolonged sound mark.
CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3040-\u30ff"
    "\u3100-\u312f\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\U00020000-\U0003134f"
)
_CJK_RUN = re.compile(f"[{CJK}]+")
_SPLIT = re.compile(f"([{CJK}]+)")
MAX_QUERY_CHARS = 1000
MAX_TERMS = 32
# words that say how a question is asked, not what it is about: dropped from a query that has
# other words (a "quoted phrase" keeps them)
STOPWORDS = frozenset(
    """a about after again all also am an and any are as at be been before being but by can
    could did do does doing done for from had has have having he her here hers him his how i if
    in into is it its just me my no nor not now of on once only or our ours out over she should
    so some such than that the their theirs them then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you
    your yours ever tell remind recall remember know please what's where's who's how's when's
    it's that's there's don't didn't doesn't isn't wasn't aren't can't won't i'm we're you're
    we've i've they've""".split()
)
_EDGES = (
    "".join(chr(c) for c in range(33, 127) if not chr(c).isalnum())
    + "？！。，、；：「」『』（）’‘“”"
)


def clean(text: str) -> str:
    """Text SQLite can store: lone surrogates (from JSON such as "\\ud800") become U+FFFD and
    NUL characters become spaces."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text.replace("\0", " ") if "\0" in text else text


def normalize(text: str) -> str:
    """NFKC: full-width Latin and half-width kana fold to the forms people type."""
    return unicodedata.normalize("NFKC", clean(text))


def _grams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)] + [run[-1]]


def project(text: str) -> str:
    """The FTS projection of `text`: CJK runs become space-separated bigrams (plus the last
    character), set apart from any Latin they touched."""
    text = normalize(text)
    if not _CJK_RUN.search(text):
        return text
    return _CJK_RUN.sub(lambda m: " " + " ".join(_grams(m.group())) + " ", text)


def _quote(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def _searchable(s: str) -> bool:
    return any(ch.isalnum() for ch in s)


@dataclass
class Query:
    """A parsed query: groups of atoms (all atoms of a group must match); groups joined by OR when
    the user wrote OR. `needles` are the plain strings a snippet looks for."""

    groups: list[list[str]] = field(default_factory=list)
    needles: list[str] = field(default_factory=list)
    stop: set[str] = field(default_factory=set)  # atoms that are bare stopwords

    def content(self, group: list[str]) -> list[str]:
        """A group's atoms without its stopwords, unless that would leave none."""
        return [a for a in group if a not in self.stop] or group

    def expression(self, *, any_term: bool = False) -> str:
        """The FTS5 MATCH expression: every atom of a group (or, with `any_term`, any atom)."""
        if any_term:
            return self.any_of(self.terms())
        parts = ["(" + " AND ".join(self.content(g)) + ")" for g in self.groups if g]
        return " OR ".join(parts)

    def terms(self) -> list[str]:
        """The distinct atoms an any-word match looks for (stopwords only if nothing else)."""
        return list(dict.fromkeys(a for g in self.groups for a in self.content(g)))

    @staticmethod
    def any_of(atoms: list[str]) -> str:
        return "(" + " OR ".join(atoms) + ")"

    @property
    def atoms(self) -> int:
        return sum(len(g) for g in self.groups)

    @property
    def searched(self) -> list[str]:
        """The needles a snippet looks for: without stopwords, unless that leaves none."""
        return [n for n in self.needles if n not in STOPWORDS] or self.needles


def _atoms(word: str, *, prefix: bool) -> list[str]:
    """FTS5 atoms for one word or phrase: each CJK run as a phrase of its bigrams (a lone
    character as a prefix), each non-CJK part as a quoted string FTS5 tokenizes itself."""
    out: list[str] = []
    parts = [p for p in _SPLIT.split(word) if p]
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if _CJK_RUN.fullmatch(part):
            if len(part) == 1:
                out.append(_quote(part) + "*")
            else:
                out.append(_quote(" ".join(part[j : j + 2] for j in range(len(part) - 1))))
        elif _searchable(part):
            out.append(_quote(part.strip()) + ("*" if prefix and last else ""))
    return out


_TOKEN = re.compile(r'"([^"]*)"?|(\S+)')


def parse(text: str) -> Query:
    """Quote user text into a safe query: words and "quoted phrases" must all match; `OR` between
    words offers alternatives; a trailing `*` makes a prefix. Nothing the user types reaches FTS5
    as syntax. Raises InvalidInput (kind invalid_query) when nothing searchable is left."""
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(
            f"query is {len(text)} characters; the limit is {MAX_QUERY_CHARS}",
            kind="invalid_query",
            hint="search for a few distinctive words, not a passage",
        )
    text = normalize(text)
    query = Query(groups=[[]])
    for m in _TOKEN.finditer(text):
        phrase, word = m.group(1), m.group(2)
        if word == "OR":
            if query.groups[-1]:
                query.groups.append([])
            continue
        raw = phrase if phrase is not None else word
        prefix = word is not None and word.endswith("*")
        raw = raw.rstrip("*") if prefix else raw
        atoms = _atoms(raw, prefix=prefix)
        if atoms:
            query.groups[-1].extend(atoms)
            query.needles.extend(_needles(raw))
            if word is not None and not prefix and _bare(raw) in STOPWORDS:
                query.stop.update(atoms)
    query.groups = [g for g in query.groups if g]
    if not query.groups:
        raise InvalidInput(
            f"query {text[:80]!r} has no searchable words",
            kind="invalid_query",
            hint="use words or names from what you want to find, e.g. 'deploy script error'",
        )
    if query.atoms > MAX_TERMS:
        raise InvalidInput(
            f"query has {query.atoms} terms; the limit is {MAX_TERMS}",
            kind="invalid_query",
            hint="search for a few distinctive words",
        )
    return query


def _bare(word: str) -> str:
    """A word as it is compared: casefolded, typographic apostrophes straightened, without the
    punctuation around it ("PostgreSQL?" -> "postgresql")."""
    return word.casefold().replace("’", "'").strip(_EDGES)


def _needles(raw: str) -> list[str]:
    return [_bare(p) for p in _SPLIT.split(raw) if p.strip() and _searchable(p)]


_SUFFIX = re.compile(r"(?:ing|ed|es|s|ly)$")
MAX_HITS = 200  # occurrences of the needles a snippet weighs


def _root(needle: str) -> str:
    """The part of a word its inflections share (`deploying`, `deploys` -> `deploy`)."""
    root = _SUFFIX.sub("", needle)
    return root if len(root) >= 3 else needle


def _hits(folded: str, needles: list[str]) -> list[tuple[int, int]]:
    """(position, needle number) of each occurrence: Latin words where a word starts, with any
    ending; CJK anywhere."""
    out: list[tuple[int, int]] = []
    for n, needle in enumerate(dict.fromkeys(needles)):
        if not needle:
            continue
        cjk = _CJK_RUN.search(needle)
        pattern = re.escape(needle) if cjk else r"(?<!\w)" + re.escape(_root(needle))
        for k, m in enumerate(re.finditer(pattern, folded)):
            if k >= MAX_HITS:
                break
            out.append((m.start(), n))
    return sorted(out)


def snippet(body: str, needles: list[str], width: int = 240) -> str:
    """A window of the original body where most of the distinct needles occur together
    (case-insensitive, any word ending), the first such window, with ellipses where it was cut;
    the body's start when no needle is found."""
    flat = " ".join(body.split())
    hits = _hits(flat.casefold(), needles)
    positions = [pos for pos, _ in hits]
    start, best = 0, 0
    for i, pos in enumerate(positions[:MAX_HITS]):
        lead = max(0, pos - width // 3)
        end = bisect.bisect_left(positions, lead + width - 8, lo=i)
        found = {n for _, n in hits[i:end]}
        if len(found) > best:
            start, best = lead, len(found)
    start = min(start, max(0, len(flat) - width))
    piece = flat[start : start + width]
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(flat) else "")
