import pytest

from sitecheck import PLACEHOLDER_DATA_SETS, build, placeholder_summary


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory):
    """The whole site, built once per test session with `mkdocs build --strict` in every language."""
    site = tmp_path_factory.mktemp("site")
    build(site)
    return site


def pytest_terminal_summary(terminalreporter):
    """One line for the data sets the measurement tests skipped: placeholder data, not measured yet."""
    if PLACEHOLDER_DATA_SETS:
        terminalreporter.write_line(placeholder_summary(PLACEHOLDER_DATA_SETS), yellow=True)
