"""`mcp-summarizer summarize FILE`, run as a user runs it: `python -m mcp_summarizer` in a
working directory of its own, with a clean environment (settings come from that directory's
`.env` under the process environment), against the local test LLM when one is configured."""

from __future__ import annotations

import codecs
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_summarizer
import shared
from mcp_summarizer import cli
from mcp_summarizer.cli.commands import fidelity_line
from mcp_summarizer.fidelity.receipt import receipt
from mcp_summarizer.process.gil import SWITCH_INTERVAL
from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM, error
from tests.support.repository import repository_files

# The subprocess imports the code under test from wherever this process found it.
PYTHONPATH = os.pathsep.join(str(Path(m.__path__[0]).resolve().parent) for m in (mcp_summarizer, shared))
STATUS = re.compile(r"\[(\d+) -> (\d+) tokens, (.+)\]")


def run(
    cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_summarizer", "summarize", *args],
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "PYTHONPATH": PYTHONPATH, **(env or {})},
        input=stdin,
        capture_output=True,
        timeout=60,
    )


def status(proc: subprocess.CompletedProcess[bytes]) -> tuple[int, int, str]:
    """The `[N -> M tokens, how]` line: the last line on stderr (log lines come before it)."""
    last = proc.stderr.decode().strip().splitlines()[-1]
    match = STATUS.fullmatch(last)
    assert match, f"status line: {last!r}"
    return int(match[1]), int(match[2]), match[3]


def printed(proc: subprocess.CompletedProcess[bytes]) -> str:
    """The summary as printed (print() adds one newline)."""
    out = proc.stdout.decode("utf-8")
    assert out.endswith("\n")
    return out[:-1]


def document(sections: int) -> str:
    parts = ["# Elwynn Forest"]
    for s in range(sections):
        parts.append(f"## Region {s}")
        for p in range(4):
            parts.append(
                f"Paragraph {p} of region {s}: Marshal Dughan guards Goldshire, where {s * 7 + p} "
                f"wolves roam near the Lion's Pride Inn in year {600 + s}. " * 4
            )
    return "\n\n".join(parts)


def russian(sections: int) -> str:
    parts = ["# Элвиннский лес"]
    for s in range(sections):
        parts.append(f"## Область {s}")
        for p in range(4):
            parts.append(
                " ".join(
                    f"Предложение {k} абзаца {p} в области {s}: маршал Дуган охраняет Златоземье, "
                    f"где {s * 7 + p + k} волков бродят у трактира «Гордость льва»."
                    for k in range(4)
                )
            )
    return "\n\n".join(parts) + "\n"


def write_env(directory: Path, **values: str) -> None:
    lines = ["# written by the test", *(f"{name}={value}" for name, value in values.items())]
    (directory / ".env").write_text("\n".join(lines) + "\n", encoding="utf-8")


def llm_env(llm: FakeLLM) -> dict[str, str]:
    return {
        "SUMMARIZER_BACKEND": "openai",
        "OPENROUTER_BASE_URL": llm.base_url,
        "LLM_CONTEXT_TOKENS": "4096",
        "LLM_MAX_ATTEMPTS": "2",
        "LLM_RETRY_BASE_SECONDS": "0",
    }


# -- without an LLM (the embedded extractive summarizer) ---------------------------------------


def test_summarize_command_prints_a_summary_of_a_file(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(document(sections=10), encoding="utf-8")
    proc = run(tmp_path, str(page), "--max-output-tokens", "120")
    assert proc.returncode == 0, proc.stderr
    summary = printed(proc)
    assert 0 < tokens.count(summary) <= 120
    assert status(proc) == (tokens.count(document(sections=10)), tokens.count(summary), "extractive")


def test_log_level_info_shows_the_completion_event_as_the_server_logs_it(tmp_path: Path) -> None:
    """Stderr carries warnings only, unless LOG_LEVEL asks for more: then the command logs
    summarization_complete as every surface does."""
    page = tmp_path / "page.md"
    page.write_text(document(sections=10), encoding="utf-8")
    quiet = run(tmp_path, str(page), "--max-output-tokens", "120")
    assert b"summarization_complete" not in quiet.stderr
    proc = run(tmp_path, str(page), "--max-output-tokens", "120", env={"LOG_LEVEL": "INFO"})
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stderr.decode().splitlines() if line.startswith("{")]
    [done] = [e for e in events if e["event"] == "summarization_complete"]
    assert done["tool"] == "cli" and done["service_id"] == "mcp_summarizer" and done["file"] == str(page)
    assert done["output_tokens"] == tokens.count(printed(proc))
    assert done["input_tokens"] == tokens.count(document(sections=10)) and done["model"] == "extractive"


def test_a_missing_file_exits_2_naming_it(tmp_path: Path) -> None:
    proc = run(tmp_path, str(tmp_path / "nope.md"))
    assert proc.returncode == 2
    assert b"cannot read" in proc.stderr and b"nope.md" in proc.stderr
    assert proc.stdout == b""


@pytest.mark.parametrize(
    ("value", "returncode", "message"),
    [
        ("-5", 1, "--max-output-tokens must be 0 (the default) or positive, got -5"),
        ("60000", 1, "--max-output-tokens=60000 is over the limit of 47982"),
        ("lots", 2, "argument --max-output-tokens: invalid int value: 'lots'"),
    ],
    ids=["negative", "over-the-ceiling", "not-a-number"],
)
def test_a_bad_budget_exits_non_zero_naming_the_option(
    tmp_path: Path, value: str, returncode: int, message: str
) -> None:
    page = tmp_path / "page.md"
    page.write_text(document(sections=3), encoding="utf-8")
    proc = run(tmp_path, str(page), "--max-output-tokens", value)
    assert proc.returncode == returncode
    assert message in proc.stderr.decode()
    assert proc.stdout == b"" and b"Traceback" not in proc.stderr


def test_an_invalid_setting_in_dotenv_exits_2_naming_the_variable(tmp_path: Path) -> None:
    write_env(tmp_path, LLM_CONTEXT_TOKENS="lots")
    page = tmp_path / "page.md"
    page.write_text("Short enough.", encoding="utf-8")
    proc = run(tmp_path, str(page))
    assert proc.returncode == 2
    stderr = proc.stderr.decode()
    assert "LLM_CONTEXT_TOKENS" in stderr and "'lots'" in stderr
    assert proc.stdout == b"" and "Traceback" not in stderr


# -- any charset -------------------------------------------------------------------------------

SHORT_RUSSIAN = "Златоземье — небольшой город в Элвиннском лесу. Маршал Дуган охраняет его покой.\n"


@pytest.mark.parametrize(
    ("encoded", "how"),
    [
        (SHORT_RUSSIAN.encode("cp1251"), "file"),
        (codecs.BOM_UTF16_LE + SHORT_RUSSIAN.encode("utf-16-le"), "file"),
        (codecs.BOM_UTF16_BE + SHORT_RUSSIAN.encode("utf-16-be"), "stdin"),
    ],
    ids=["cp1251", "utf-16-le-bom", "utf-16-be-bom-on-stdin"],
)
def test_a_file_within_budget_comes_back_unchanged_whatever_its_charset(
    tmp_path: Path, encoded: bytes, how: str
) -> None:
    if how == "file":
        (tmp_path / "note.txt").write_bytes(encoded)
        proc = run(tmp_path, "note.txt", "--max-output-tokens", "200")
    else:
        proc = run(tmp_path, "-", "--max-output-tokens", "200", stdin=encoded)
    assert proc.returncode == 0, proc.stderr
    assert printed(proc) == SHORT_RUSSIAN, "decoded right, no BOM left, nothing changed"
    size = tokens.count(SHORT_RUSSIAN)
    assert status(proc) == (size, size, "extractive")


def test_a_cp1251_file_is_summarized_from_its_decoded_text(tmp_path: Path) -> None:
    text = russian(sections=12)
    (tmp_path / "lore.txt").write_bytes(text.encode("cp1251"))
    proc = run(tmp_path, "lore.txt", "--max-output-tokens", "150")
    assert proc.returncode == 0, proc.stderr
    summary = printed(proc)
    assert 0 < tokens.count(summary) <= 150
    lines = [line for line in summary.splitlines() if line.strip()]
    assert any("маршал Дуган охраняет Златоземье" in line for line in lines)
    for line in lines:
        assert line in text, f"a line of the summary is text of the file, decoded right: {line!r}"
    assert status(proc)[0] == tokens.count(text)


# -- with an LLM configured in .env --------------------------------------------------------------


def test_dotenv_in_the_working_directory_configures_the_llm(tmp_path: Path, fresh_llm: FakeLLM) -> None:
    write_env(tmp_path, **llm_env(fresh_llm), LLM_MODEL="test/from-dotenv")
    content = document(sections=10)
    (tmp_path / "page.md").write_text(content, encoding="utf-8")
    proc = run(tmp_path, "page.md", "--max-output-tokens", "120")
    assert proc.returncode == 0, proc.stderr
    seen = fresh_llm.requests
    assert seen and all(r.outcome == "ok" for r in seen)
    assert {r.body["model"] for r in seen} == {"test/from-dotenv"}
    assert all(r.prompt_tokens + (r.max_tokens or 0) <= 4096 for r in seen), "LLM_CONTEXT_TOKENS was read"
    summary = printed(proc)
    assert 0 < tokens.count(summary) <= 120
    assert status(proc) == (tokens.count(content), tokens.count(summary), "test/from-dotenv")


def test_the_process_environment_wins_over_dotenv(tmp_path: Path, fresh_llm: FakeLLM) -> None:
    write_env(tmp_path, **llm_env(fresh_llm), LLM_MODEL="test/from-dotenv")
    (tmp_path / "page.md").write_text(document(sections=6), encoding="utf-8")
    proc = run(tmp_path, "page.md", "--max-output-tokens", "100", env={"LLM_MODEL": "test/from-environment"})
    assert proc.returncode == 0, proc.stderr
    assert fresh_llm.calls > 0
    assert {r.body["model"] for r in fresh_llm.requests} == {"test/from-environment"}
    assert status(proc)[2] == "test/from-environment"


def test_when_the_llm_fails_for_good_stderr_says_degraded_and_why(tmp_path: Path, fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = lambda r: error(503, message="upstream overloaded")
    write_env(tmp_path, **llm_env(fresh_llm))
    content = document(sections=6)
    (tmp_path / "page.md").write_text(content, encoding="utf-8")
    proc = run(tmp_path, "page.md", "--max-output-tokens", "100")
    assert proc.returncode == 0, proc.stderr
    summary = printed(proc)
    notice = "[summarized offline: the LLM failed: HTTP 503: upstream overloaded after 2 attempts]"
    assert summary.startswith(notice + "\n\n"), "the default policy: the embedded summary, saying so"
    size, out, how = status(proc)
    assert (size, how) == (tokens.count(content), "degraded (extractive): HTTP 503: upstream overloaded")
    assert out == tokens.count(summary) <= 100
    outcomes = [r.outcome for r in fresh_llm.requests]
    assert outcomes.count("error:503") >= 2 and "ok" not in outcomes


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    """`mcp-summarizer summarize big.md | head -1`: the closed pipe ends the command quietly."""
    (tmp_path / "big.md").write_text("\n\n".join(f"Sentence {i} about wolves." for i in range(3000)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_summarizer", "summarize", "big.md", "--max-output-tokens", "2000"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": PYTHONPATH},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before a byte is written
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_stderr_carries_the_fidelity_receipt_before_the_status(tmp_path: Path) -> None:
    """The receipt line is the receipt of the summary printed (recomputed here, it agrees);
    a file within budget comes back unchanged and gets none."""
    content = document(sections=10)
    (tmp_path / "page.md").write_text(content, encoding="utf-8")
    proc = run(tmp_path, "page.md", "--max-output-tokens", "150")
    assert proc.returncode == 0, proc.stderr
    line = proc.stderr.decode().strip().splitlines()[-2]
    expected = receipt(content, printed(proc))
    assert expected.source_facts > 0 and expected.kept_facts > 0
    assert line == fidelity_line(expected)
    (tmp_path / "short.md").write_text("Marshal Dughan.", encoding="utf-8")
    proc = run(tmp_path, "short.md", "--max-output-tokens", "150")
    assert "[fidelity" not in proc.stderr.decode()


def test_the_service_hands_the_gil_to_its_event_loop_every_millisecond() -> None:
    """Set before anything else runs (see process/gil.py), whatever the command: here `--help`, which
    exits at once."""
    before = sys.getswitchinterval()
    try:
        with pytest.raises(SystemExit):
            cli.main(["--help"])
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL) != before
    finally:
        sys.setswitchinterval(before)


# -- the command line itself -----------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_summarizer", *args],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": PYTHONPATH, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_usage_lists_the_subcommands_and_each_has_its_own_help() -> None:
    top = _cli("--help")
    assert top.returncode == 0, top.stderr
    usage = top.stdout.split("\n\n", 1)[0]
    assert "{serve,summarize,proxy}" in usage, usage
    for command, option in (
        ("serve", "--transport"),
        ("summarize", "--max-output-tokens"),
        ("proxy", "--config"),
    ):
        assert re.search(rf"^\s+{command}\s+\S", top.stdout, re.M), f"{command} is described in the help"
        sub = _cli(command, "--help")
        assert sub.returncode == 0, sub.stderr
        assert sub.stdout.startswith(f"usage: mcp-summarizer {command} ") and option in sub.stdout
    wrong = _cli("summarise")
    assert wrong.returncode == 2 and "invalid choice: 'summarise'" in wrong.stderr


# -- progress: on a terminal only ----------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def _big_job(tmp_path: Path, llm: FakeLLM) -> list[str]:
    write_env(tmp_path, **llm_env(llm))
    (tmp_path / "page.md").write_text(document(sections=200), encoding="utf-8")
    return [sys.executable, "-m", "mcp_summarizer", "summarize", "page.md", "--max-output-tokens", "200"]


def test_a_piped_stderr_gets_no_progress(tmp_path: Path, fresh_llm: FakeLLM) -> None:
    proc = run(tmp_path, *_big_job(tmp_path, fresh_llm)[4:])
    assert proc.returncode == 0, proc.stderr
    assert fresh_llm.calls > 10
    # Warnings are logged as JSON lines (the stand-in's summaries can be flagged low-fidelity);
    # besides them, only the receipt and the status line: no progress.
    lines = [line for line in proc.stderr.decode().splitlines() if not line.startswith("{")]
    assert len(lines) == 2 and lines[0].startswith("[fidelity: ") and STATUS.fullmatch(lines[1]), lines


def on_a_terminal(command: list[str], cwd: Path) -> str:
    """What ``command`` draws on stderr when stderr is a terminal (ANSI codes removed); its
    stdout, the summary, must not be empty."""
    import pty

    leader, follower = pty.openpty()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "PYTHONPATH": PYTHONPATH, "TERM": "xterm"}
    proc = subprocess.Popen(
        command, cwd=cwd, env={**env, "COLUMNS": "160"}, stdout=subprocess.PIPE, stderr=follower
    )
    os.close(follower)
    seen = b""
    try:
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not data:
                break
            seen += data
    finally:
        os.close(leader)
    assert proc.wait(timeout=300) == 0
    assert proc.stdout is not None and proc.stdout.read().strip(), "the summary still goes to stdout"
    return ANSI.sub("", seen.decode())


def test_a_terminal_sees_the_chunks_mapped_and_the_reduce_levels(tmp_path: Path, fresh_llm: FakeLLM) -> None:
    screen = on_a_terminal(_big_job(tmp_path, fresh_llm), tmp_path)
    maps = [r for r in fresh_llm.requests if "merge" not in r.system.lower()]
    # The last frame drawn: every phase's bar, complete.
    mapped = re.findall(r"chunks mapped\s.*?(\d+)/(\d+)", screen)
    assert mapped and mapped[-1] == (str(len(maps)), str(len(maps))), screen[-2000:]
    assert re.search(r"final merge\s.*?1/1", screen), screen[-2000:]
    levels = {int(n) for n in re.findall(r"reduce level (\d+)", screen)}
    assert levels == set(range(1, len(levels) + 1)) and levels, screen[-2000:]
    # From the start: the engine loading, then the text read (its chunks cut while the first
    # ones are mapped), before any call has ended.
    assert screen.lstrip().startswith("starting"), screen[:500]
    assert screen.index("text read") < screen.index("chunks mapped"), screen[:2000]
    size = len((tmp_path / "page.md").read_text(encoding="utf-8"))
    assert re.search(rf"text read\s.*? {size:,}/{size:,} characters, {len(maps)} chunks", screen), screen[
        -2000:
    ]
    assert STATUS.search(screen), "the status line follows"


def test_a_terminal_sees_a_long_embedded_summary_move_through_its_stages(tmp_path: Path) -> None:
    """The repository's own .md and .py files (2.4 MB) with no API key: the embedded summary
    takes seconds of CPU, and every stage of it shows on the terminal as it goes."""
    (tmp_path / "repo.txt").write_text("".join(repository_files().values()), encoding="utf-8")
    size = len((tmp_path / "repo.txt").read_text(encoding="utf-8"))
    command = [sys.executable, "-m", "mcp_summarizer", "summarize", "repo.txt"]
    screen = on_a_terminal(command, tmp_path)
    assert screen.lstrip().startswith("starting"), "drawn before the engine is loaded"
    order = [screen.index(label) for label in STAGES]
    assert order == sorted(order), "the stages, in order"
    for label in STAGES:
        counts = _counts(screen, label)
        assert counts, f"{label}: no counts drawn"
        last = counts[-1]
        if label != "tokens chosen":  # the budget, which the summary need not fill
            assert last[0] == last[1], f"{label} did not end: {counts[-5:]}"
        if label in ("text read", "text parsed", "units weighed", "tokens chosen"):
            between = {a for a, b in counts if 0 < a < b}
            assert len(between) >= 3, f"{label} did not move: {counts}"
    # The text is read as it came (2.4 MB), then counted as the site chrome left it.
    assert _counts(screen, "text read")[0] == (0, size) and _counts(screen, "text read")[-1][1] <= size
    assert STATUS.search(screen), "the status line follows"


STAGES = ["starting", "text read", "text parsed", "units weighed", "tokens chosen", "facts checked"]


def _counts(screen: str, label: str) -> list[tuple[int, int]]:
    """Every ``done/total`` drawn on ``label``'s bar, in order."""
    found = re.findall(rf"{label} [━╸╺ ]+ (\d[\d,]*)/(\d[\d,]*)", screen)
    return [(int(a.replace(",", "")), int(b.replace(",", ""))) for a, b in found]
