import pytest

from sitecheck import build


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory):
    """The whole site, built once per test session with `mkdocs build --strict` in every language."""
    site = tmp_path_factory.mktemp("site")
    build(site)
    return site
