"""holon.memory.project: the CJK bigram projection, query quoting and snippets, checked against a
real SQLite FTS5 table with the index's tokenizer."""

from __future__ import annotations

import sqlite3

import pytest

from holon.errors import InvalidInput
from holon.memory import project


def test_cjk_runs_become_bigrams_and_their_last_character():
    assert project.project("机器学习") == " 机器 器学 学习 习 "
    assert project.project("用Python写代码") == " 用 Python 写代 代码 码 "
    assert project.project("plain latin text") == "plain latin text"


def test_full_width_latin_and_half_width_kana_are_folded():
    assert project.project("ＡＢＣ") == "ABC"
    assert project.project("ｶﾀｶﾅ").split() == ["カタ", "タカ", "カナ", "ナ"]


@pytest.fixture
def fts():
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
    )
    docs = [
        "我们使用机器学习模型来分类邮件。",
        "The deploy key lives in vault path secret/deploy.",
        "日本語のテキストも検索できます",
        "Mixed: 用Python写的数据管道 runs nightly",
        'quote " and OR NEAR( tokens * -- ^ are text',
        "user_id column renamed in v1.2.3",
    ]
    for i, text in enumerate(docs):
        db.execute("INSERT INTO t(rowid, body) VALUES (?, ?)", (i, project.project(text)))

    def match(query: str, **kw) -> set[int]:
        expr = project.parse(query).expression(**kw)
        return {r[0] for r in db.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,))}

    return match


@pytest.mark.parametrize(
    "query, expected",
    [
        ("学习", {0}),  # two characters inside a longer run
        ("机器学习模型", {0}),  # a whole run, as a phrase of bigrams
        ("邮", {0}),  # one character, at a run's end as well
        ("机", {0}),
        ("学器", set()),  # the characters, but not adjacent in that order
        ("检索", set()),
        ("テキスト", {2}),
        ("検索", {2}),
        ("Python 数据", {3}),  # a mixed query finds the Latin and the CJK part
        ("数据管道", {3}),
        ("deploy vault", {1}),
        ("Deploy VAULT", {1}),  # case-insensitive
        ("depl*", {1}),
        ('"lives in vault"', {1}),
        ('"vault lives"', set()),
        ("deploy OR 学习", {0, 1}),
        ("user_id", {5}),
        ("v1.2.3", {5}),
    ],
)
def test_queries_find_what_they_should(fts, query, expected):
    assert fts(query) == expected


@pytest.mark.parametrize(
    "hostile",
    ['"', "NEAR(", "a AND", "*", "^x", "x OR", "OR", '"unbalanced', "col:value", "(((", "-x", "'"],
)
def test_fts_syntax_in_user_text_never_reaches_sqlite(fts, hostile):
    try:
        fts(hostile)  # a result or a clean InvalidInput, never sqlite3.OperationalError
    except InvalidInput as exc:
        assert exc.kind == "invalid_query" and exc.hint


def test_quoted_operators_are_words(fts):
    assert fts("NEAR tokens") == {4}
    assert fts('"and OR NEAR"') == {4}


def test_any_term_mode_widens_a_query(fts):
    assert fts("deploy nonexistent") == set()
    assert fts("deploy nonexistent", any_term=True) == {1}


@pytest.mark.parametrize("bad", ["", "   ", "*** --- ...", "x" * 1001, " ".join(["w"] * 40)])
def test_unsearchable_or_oversized_queries_are_refused(bad):
    with pytest.raises(InvalidInput) as err:
        project.parse(bad)
    assert err.value.kind == "invalid_query" and err.value.hint


def test_snippet_is_cut_from_the_original_text_around_the_first_hit():
    body = "x " * 300 + "the Deploy key lives here " + "y " * 300
    snip = project.snippet(body, project.parse("deploy").needles, width=60)
    assert "Deploy key" in snip and snip.startswith("…") and snip.endswith("…")
    cjk = project.snippet("前文" * 200 + "机器学习模型" + "后文" * 200, ["学习"], width=40)
    assert "学习" in cjk and " 学习 " not in cjk  # never the expansion tokens
    assert project.snippet("short text", ["absent"]) == "short text"
