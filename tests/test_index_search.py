"""``sessionref search``: short words fold case as long words do, any number of words, and
the options' checks (docs: README §Index and search)."""

from __future__ import annotations

import itertools
import json
import sqlite3
import string
from pathlib import Path
from typing import Any

import pytest

from sessionref.cli.app import main
from sessionref.index import SessionIndex
from sessionref.index.casefold import fold_char, fold_text, spellings
from sessionref.index.search import fts_phrase, match_clause
from sessionref.log.store import DirectoryStore
from sessionref.testing import write_session_store
from tests.logs import turn

#: Letters whose case SQLite's fold table (Unicode 6.1) does not know (Greek yot, Cyrillic
#: letters of Unicode 7.0): short words fold them (str.lower does), long words do not.
NEWER_LETTERS = {"\u037f", "\u03f3", *map(chr, range(0x528, 0x530))}
#: ASCII, Latin, Greek (with Greek Extended) and Cyrillic letters; the letters that fold to
#: others beyond ``str.lower`` (micro sign, long s, final sigma, Greek symbols, prosgegrammeni),
#: capital sharp s, the Kelvin, Ångström and ohm signs, dotted and dotless i; some without case.
LETTERS = sorted(
    {chr(c) for c in [*range(0x21, 0x7F), *range(0xA0, 0x250), *range(0x370, 0x530)]}
    | {chr(c) for c in range(0x1F00, 0x2000)}
    | set("µſςϐϑϕϖϰϱϵẛ\u1fbe\u0345ẞ\u212a\u212b\u2126İı令牌٣€")
)


def session(session_id: str, created_at: int, cwd: str, *texts: str) -> dict[str, Any]:
    """A log of one turn per text (the question; the reply is "ok")."""
    header = {"version": 0, "id": session_id, "createdAt": created_at, "delegationDepth": 0}
    events = [e for n, text in enumerate(texts) for e in turn(6 * n, n + 1, text, "ok")]
    return {"header": {**header, "cwd": cwd}, "events": events}


def found(tmp_path: Path, logs: list[dict[str, Any]], query: str, **options: Any) -> list[str]:
    if not (tmp_path / "store").exists():
        write_session_store(tmp_path / "store", logs)
    index = SessionIndex(DirectoryStore(tmp_path / "store"), tmp_path / "index.sqlite")
    options.setdefault("limit", 100)
    hits = [hit.session_id for hit in index.search(query, **options)]
    index.close()
    return hits


def test_short_words_ignore_case_beyond_ascii(tmp_path: Path) -> None:
    logs = [
        session("de", 1, "/w", "So ein ÄRGER über die Straße"),
        session("el", 2, "/w", "ΟΔΟΣ και µ"),
        session("cjk", 3, "/w", "认证令牌刷新失败"),
    ]
    assert found(tmp_path, logs, "är") == ["de"]
    assert found(tmp_path, logs, "ÜB är") == ["de"]
    assert found(tmp_path, logs, "ärger") == ["de"]  # a long word, folded by the index
    assert found(tmp_path, logs, "σ") == ["el"]  # the final capital sigma
    assert found(tmp_path, logs, "ος") == ["el"]
    assert found(tmp_path, logs, "Μ") == ["el"]  # the micro sign folds to mu
    assert found(tmp_path, logs, "令牌") == ["cjk"]
    assert found(tmp_path, logs, "ä ok") == ["de"]  # the reply holds the ASCII word


def rows(db: sqlite3.Connection, table: str, where: str, params: dict[str, str]) -> set[int]:
    """The rowids of ``table`` (an FTS5 table of column ``text``) that ``where`` keeps."""
    return {row for (row,) in db.execute(f"SELECT rowid FROM {table} WHERE {where}", params)}


def test_a_one_letter_word_finds_what_the_trigram_index_finds_for_three_of_it() -> None:
    """The invariant behind short words: ``c`` finds the text ``d`` exactly when the index
    finds ``ccc`` in ``ddd`` (SQLite folds those), for every pair of LETTERS; letters newer
    than SQLite's fold table fold in short words only."""
    db = sqlite3.connect(":memory:")
    for table, times in (("texts", 1), ("triples", 3)):
        db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(text, tokenize='trigram')")
        db.executemany(
            f"INSERT INTO {table} (rowid, text) VALUES (?, ?)",
            [(n, letter * times) for n, letter in enumerate(LETTERS)],
        )
    for n, letter in enumerate(LETTERS):
        long = rows(db, "triples", "triples MATCH :m", {"m": fts_phrase(letter * 3)})
        short = rows(db, "texts", *match_clause([letter]))
        assert long <= short, letter
        if letter not in NEWER_LETTERS:
            assert short == long == short | {n}, letter


def test_a_text_folds_as_its_characters_fold_one_by_one() -> None:
    """``fold_text`` folds a whole text with ``str.lower`` (which lower-cases a final sigma
    by its context) and one translation: it must give what folding each character alone
    gives, for every code point and in context."""
    every = "".join(map(chr, range(0x110000))).replace("\u0130", "")  # İ: folded one by one
    assert fold_text(every) == "".join(map(fold_char, every))
    for text in ("ΌΣΟΣ ΣΑΣ σας Σ", "ǅ ǈ ß ẞ Ω K Å µ ſ ϐ"):
        assert fold_text(text) == "".join(map(fold_char, text)), text


def test_every_character_that_folds_alike_is_spelled() -> None:
    """``spellings`` builds a character's class from its case mappings and two small tables:
    it must find every code point that folds to the same (up to ASCII case), in this
    Python's Unicode version."""
    classes: dict[str, set[str]] = {}
    for char in map(chr, range(0x110000)):
        if char.lower() != char or char.upper() != char:  # else it folds to itself
            folded = fold_char(char)
            classes.setdefault(folded, {folded}).add(char.lower() if char.isascii() else char)
    for members in classes.values():
        if len(members) > 1:
            for char in members:
                assert spellings(char) == sorted(members), char


def test_a_query_of_thousands_of_words_is_answered(tmp_path: Path) -> None:
    short = ["".join(pair) for pair in itertools.product(string.ascii_lowercase, repeat=2)]
    greek = [chr(0x3B1 + n) for n in range(24) if n != 1]  # lower-case alpha…omega, no final
    long = [f"w{a}{b}" for a, b in itertools.product(string.ascii_lowercase, repeat=2)]
    words = short + greek + long
    logs = [
        session("all", 1, "/w", " ".join(words).upper()),
        session("most", 2, "/w", " ".join(words[:-1]).upper()),
    ]
    assert len(words) > 1000
    assert found(tmp_path, logs, " ".join(words)) == ["all"]
    assert found(tmp_path, logs, " ".join(short + greek)) == ["most", "all"]  # newest first


@pytest.mark.parametrize("cwd", ["/w/app/", "/w/./x/../app", "/w//app", "/w/app"])
def test_search_cwd_option_is_normalized(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cwd: str
) -> None:
    write_session_store(
        tmp_path / "store",
        [session("here", 1, "/w/app", "hello"), session("there", 2, "/w/other", "hello")],
    )
    where = ["--root", str(tmp_path / "store"), "--index", str(tmp_path / "index.sqlite")]
    assert main(["search", "hello", "--cwd", cwd, "--json", *where]) == 0
    assert [hit["sessionId"] for hit in json.loads(capsys.readouterr().out)] == ["here"]


@pytest.mark.parametrize("cwd", [Path("/w/app"), "/w/app"])
def test_search_takes_a_cwd_as_a_path_or_a_string(tmp_path: Path, cwd: Any) -> None:
    logs = [session("here", 1, "/w/app", "hello"), session("there", 2, "/w/other", "hello")]
    assert found(tmp_path, logs, "hello", cwd=cwd) == ["here"]


def test_search_limit_none_is_the_default_of_ten(tmp_path: Path) -> None:
    """README: counts are JavaScript numbers and ``None`` is the default; it was refused."""
    logs = [session(f"s{n:02}", n, "/w", "hello") for n in range(12)]
    newest_ten = [f"s{n:02}" for n in range(11, 1, -1)]  # equal scores: newest first
    assert found(tmp_path, logs, "hello", limit=None) == newest_ten


@pytest.mark.parametrize("option", [["--limit", "0"], ["--limit", "-3"], ["--workers", "0"]])
def test_counts_below_one_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str]
) -> None:
    command = "index" if option[0] == "--workers" else "search"
    query = [] if command == "index" else ["hello"]
    with pytest.raises(SystemExit) as exit_:
        main([command, *query, "--root", str(tmp_path), *option])
    assert exit_.value.code == 2
    assert f"{option[1]}' is not a positive integer" in capsys.readouterr().err


def test_search_help_says_where_words_match_and_what_the_score_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "in one message" not in text.replace("not necessarily in one message", "")
    assert "somewhere in a session's conversation" in text
    assert "score is the session's bm25 rank, lower is better" in text


def test_index_says_when_nothing_was_saved_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Building the index is all ``index`` is for: one it could not save is exit 1. A search,
    which answers from the store directly, still succeeds."""
    write_session_store(tmp_path / "store", [session("a", 1, "/w", "hello")])
    (tmp_path / "blocker").write_text("a file where the index folder should be")
    where = ["--root", str(tmp_path / "store"), "--index", str(tmp_path / "blocker" / "i.sqlite")]
    assert main(["index", *where]) == 1
    out, err = capsys.readouterr()
    index_path = str(tmp_path / "blocker" / "i.sqlite")
    done = "1 session read (1 log read, 0 removed)"
    assert out == f"{done}, none saved: {index_path} was not written\n"
    assert len(err.splitlines()) == 1 and index_path in err  # the warning says why
    assert main(["search", "hello", *where]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("a") and len(err.splitlines()) == 1 and index_path in err
