"""`${release:NAME}` and `${release:NAME,SUBPATH}` in a config: the folder (or a path inside it) of a release
fetched and verified in `paths.data_dir`, the default of a dataset's `data.path`. A release that is not there
stops the run where the config is first resolved, saying which `python -m pragexp.data fetch NAME` to run and
that `data.path=` works as well; an explicit `data.path` replaces the interpolation, which then never runs.
`${release_unless:GIVEN,NAME,[SUBPATH,...]}` is the same default, a list, for a key that another overrides
(GRICE's `test_path`, which its `data.path` replaces): nothing when GIVEN (that other key) is set, so a user's
own files never need the release.

The entry points register the resolver (`register()`) before Hydra composes anything."""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

from pragexp.data.releases.check import release_dir, state
from pragexp.data.releases.registry import DATA_DIR_VARIABLE, default_data_dir, release

RESOLVER = "release"
RESOLVER_UNLESS = "release_unless"


class ReleaseNotFetched(FileNotFoundError):
    pass


def release_path(name: str, subpath: str = "", data_dir: Path | None = None) -> Path:
    """Where `subpath` of release `name` is in `data_dir`, once fetched and verified."""
    entry = release(name)
    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    found = state(entry, data_dir)
    if found != "verified":
        what = {
            "absent": "is not in",
            "stale": "was fetched at another commit than the registry's into",
            "unverified": "is not verified in",
        }[found]
        raise ReleaseNotFetched(
            f"{entry.title} ({name}) {what} the data folder {data_dir} (paths.data_dir, "
            f"${DATA_DIR_VARIABLE}): run `python -m pragexp.data fetch {name}`, or give your own copy with "
            "data.path=..."
        )
    return release_dir(data_dir, entry) / subpath if subpath else release_dir(data_dir, entry)


def _resolve(name: str, subpath: str = "", *, _root_) -> str:
    data_dir = OmegaConf.select(_root_, "paths.data_dir", default=None)
    return str(release_path(str(name), str(subpath), Path(data_dir).expanduser() if data_dir else None))


def _resolve_unless(given, name: str, subpaths, *, _root_) -> list[str] | None:
    """The release's `subpaths` (a list), or None where `given` is set."""
    return None if given is not None else [_resolve(name, str(sub), _root_=_root_) for sub in subpaths]


def register() -> None:
    """The `release` and `release_unless` resolvers, registered once per process."""
    if not OmegaConf.has_resolver(RESOLVER):
        OmegaConf.register_new_resolver(RESOLVER, _resolve)
    if not OmegaConf.has_resolver(RESOLVER_UNLESS):
        OmegaConf.register_new_resolver(RESOLVER_UNLESS, _resolve_unless)
