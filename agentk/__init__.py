"""agentk. The project's other top-level packages (`stages`, `unit_tests_lib`, `tools`, `rag`, `curriculum`) are
imported by those names, by agentk and by the code it generates. In the repository they are top-level folders (the
editable install puts the repository on sys.path); an installed wheel keeps them in `agentk/_packages/` rather
than at the top of site-packages, where `tools` would clash with other distributions' packages of that name, and
importing agentk puts that folder on sys.path, just ahead of the site-packages that holds agentk."""

import sys
from pathlib import Path

PACKAGES = Path(__file__).resolve().with_name("_packages")


def _add_packages() -> None:
    if not PACKAGES.is_dir() or str(PACKAGES) in sys.path:
        return
    home = PACKAGES.parent.parent  # the site-packages holding agentk
    at = next((i for i, p in enumerate(sys.path) if p and Path(p).resolve() == home), len(sys.path))
    sys.path.insert(at, str(PACKAGES))


_add_packages()
