"""Filter a NUL-separated file list (git ls-files -z) down to the collection content ansible-test judges.

Keeps what `ansible-galaxy collection build` would ship (galaxy.yml's build_ignore, same fnmatch semantics
as ansible-galaxy: a pattern matches a path or any of its parent directories) plus tests/unit and
tests/sanity, which ansible-test itself runs.
"""
import fnmatch
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
ALWAYS = ("tests/unit/", "tests/sanity/", "tests/config.yml")


def ignored(path, patterns):
    parts = path.split("/")
    candidates = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatch(c, p) for c in candidates for p in patterns)


def main():
    patterns = yaml.safe_load((ROOT / "galaxy.yml").read_text()).get("build_ignore") or []
    names = [n for n in sys.stdin.buffer.read().decode().split("\0") if n]
    keep = [n for n in names if n.startswith(ALWAYS) or not ignored(n, patterns)]
    sys.stdout.buffer.write(("\0".join(keep) + "\0").encode())


if __name__ == "__main__":
    main()
