"""Write the fixture competitions: `python -m testing.competitions --out DIR [--only NAME ...] [--list]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from testing.competitions import build, registry


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Write the generated fixture competitions in the arena layout.")
    p.add_argument("--out", type=Path, help="folder to write <name>/{public,private,meta.json} into")
    p.add_argument("--only", nargs="+", metavar="NAME", help="only these fixtures")
    p.add_argument("--list", action="store_true", help="list the fixtures (name, family, quirk) and stop")
    args = p.parse_args(argv)
    fixtures = registry()
    if args.list:
        for fx in fixtures.values():
            print(f"{fx.name:40s} {fx.family:24s} {fx.quirk}")
        return 0
    if args.out is None:
        p.error("--out is required (or --list)")
    if unknown := sorted(set(args.only or []) - set(fixtures)):
        print(f"competitions: unknown fixture(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    for name in args.only or fixtures:
        print(build(name, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
