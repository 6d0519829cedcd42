"""The maintenance scripts (scripts/readme_examples.py, scripts/scaling.py) refuse bad input before
any work: a clear message naming the flag or file, exit status 2, no Python traceback."""

import subprocess
import sys

import pytest

from conftest import REPO

SCRIPTS = REPO / "scripts"


def run_script(name, *args):
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True, timeout=60)


def expect_refused(proc, says):
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


def test_readme_examples_refuses_a_readme_it_cannot_read(tmp_path):
    missing = tmp_path / "MISSING.md"
    expect_refused(run_script("readme_examples.py", "--check", "--readme", str(missing)),
                   f"error: --readme {missing}: cannot read it: No such file or directory")
    expect_refused(run_script("readme_examples.py", "--check", "--readme", str(tmp_path)),
                   f"error: --readme {tmp_path}: cannot read it: Is a directory")


def test_readme_examples_refuses_a_readme_with_nothing_to_check(tmp_path):
    # Prose, a shell block and a console block of another program: no `$ build/zepp` example, no figure.
    readme = tmp_path / "README.md"
    readme.write_text("# A project\n\nSome prose.\n\n```sh\nbuild/zepp simulate\n```\n\n```console\n$ ls\nREADME.md\n```\n")
    for mode in ("--check", "--write"):
        expect_refused(run_script("readme_examples.py", mode, "--readme", str(readme)),
                       f"error: --readme {readme}: no console example (a ```console block starting with "
                       "`$ build/zepp`) and no figure (<!--=EXPR|FORMAT-->TEXT<!--/-->): nothing to check")
    assert "build/zepp simulate" in readme.read_text()  # --write left it as it was


@pytest.mark.parametrize("args, says", [
    (["--budget", "-1"], "--budget: expected a positive number of CPU seconds, got -1"),
    (["--budget", "0"], "--budget: expected a positive number of CPU seconds, got 0"),
    (["--budget", "nan"], "--budget: expected a positive number of CPU seconds, got nan"),
    (["--nodes", "2,4,2"], "--nodes: names 2 twice in '2,4,2'"),
    (["--nodes", "4,"], "--nodes: expected a comma-separated list of node counts, got '4,'"),
    (["--strategies", ""], "--strategies: names no strategy"),
    (["--strategies", ","], "--strategies: entry 1 of ',' is empty"),
    (["--strategies", "a2av,zepp,"], "--strategies: entry 3 of 'a2av,zepp,' is empty"),
    (["--strategies", "zepp,a2av,zepp"], "--strategies: names 'zepp' twice in 'zepp,a2av,zepp'"),
    (["--gpus-per-node", "0"], "--gpus-per-node: expected >= 1, got 0"),
    (["--size-mb", "-2"], "--size-mb: expected a positive number of MiB, got -2"),
])
def test_scaling_refuses_bad_flags_before_any_run(tmp_path, args, says):
    # A zepp that records being run: a refusal must come before the first run.
    marker = tmp_path / "ran"
    zepp = tmp_path / "zepp"
    zepp.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    zepp.chmod(0o755)
    expect_refused(run_script("scaling.py", str(zepp), *args), says)
    assert not marker.exists()
