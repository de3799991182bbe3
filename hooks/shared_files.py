"""Serve docs/assets and docs/data in every language's build.

Each language builds from its own folder (docs/en, docs/zh, docs/vi), but the figures, plots,
measurements and bundled scripts exist once. This hook adds them to every build as if they were
in its docs folder, so pages link to them with ordinary relative links that MkDocs validates.
Generated Markdown under docs/data is not a page: pages include it through pymdownx.snippets.
"""

from pathlib import Path

from mkdocs.structure.files import File

DOCS_ROOT = Path(__file__).resolve().parent.parent / "docs"
SHARED_FOLDERS = ("assets", "data")


def shared_files(config):
    for folder in SHARED_FOLDERS:
        for path in sorted((DOCS_ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix != ".md":
                yield File(
                    path.relative_to(DOCS_ROOT).as_posix(),
                    src_dir=str(DOCS_ROOT),
                    dest_dir=config["site_dir"],
                    use_directory_urls=config["use_directory_urls"],
                )


def on_files(files, config):
    for file in shared_files(config):
        files.append(file)
    return files
