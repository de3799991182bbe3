"""Build the site in every language with `mkdocs build --strict`, from the committed measurements.

English is built into SITE/, the other languages into SITE/<lang>/. English goes first because
its build empties SITE/. Before building, every language must have the same pages and the same
navigation: a single-language build cannot see that a page is missing in another language, and
the language switcher would then link to a page that does not exist.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from mkdocs.utils.yaml import yaml_load

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LANGUAGES = {"en": "mkdocs.yml", "zh": "mkdocs.zh.yml", "vi": "mkdocs.vi.yml"}
PAGE_SUFFIXES = (".md", ".ipynb")


def output_dir(site_dir, language):
    return site_dir if language == "en" else site_dir / language


def pages(language):
    """Source pages of one language, as paths relative to its docs folder."""
    folder = DOCS / language
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.suffix in PAGE_SUFFIXES)


def nav_pages(language):
    """The pages that a language's nav lists, in order."""
    with (ROOT / LANGUAGES[language]).open("rb") as file:
        nav = yaml_load(file).get("nav", [])

    def walk(items):
        for item in items:
            if isinstance(item, dict):
                item = next(iter(item.values()))
            yield from walk(item) if isinstance(item, list) else [item]

    return list(walk(nav))


def out_of_step():
    """Where the languages' pages or navigation differ from English's, as sentences with the fix."""
    problems = []
    english, english_nav = pages("en"), nav_pages("en")
    for language, config in LANGUAGES.items():
        have = pages(language)
        problems += [f"docs/{language}/{page} is missing: docs/en/{page} exists, so every language needs it "
                     f"(write the {language} page at that path)" for page in english if page not in have]
        problems += [f"docs/{language}/{page} has no English page: write docs/en/{page}, or remove it"
                     for page in have if page not in english]
        nav = nav_pages(language)
        problems += [f"{config}: nav lists {page}, but docs/{language}/{page} does not exist"
                     for page in nav if page not in have]
        problems += [f"{config}: docs/{language}/{page} is in no nav line: add one to the nav of {config}"
                     for page in have if page not in nav]
        if language != "en" and [p for p in nav if p in english_nav] != [p for p in english_nav if p in nav]:
            problems.append(f"{config}: its nav lists the pages in another order than mkdocs.yml: "
                            f"{config} has {nav}, mkdocs.yml has {english_nav}")
    return problems


def build(site_dir, languages=tuple(LANGUAGES)):
    for language in languages:
        command = [
            sys.executable, "-m", "mkdocs", "build", "--strict",
            "--config-file", LANGUAGES[language],
            "--site-dir", str(output_dir(site_dir, language)),
        ]
        print(f"building {language}: {' '.join(command[2:])}", flush=True)
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        subprocess.run(command, cwd=ROOT, check=True, env=env)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--site-dir", type=Path, default=ROOT / "site")
    args = parser.parse_args()
    site_dir = args.site_dir.resolve()
    problems = out_of_step()
    if problems:
        sys.exit("site not built: the languages are out of step\n  " + "\n  ".join(problems))
    try:
        build(site_dir)
    except subprocess.CalledProcessError as error:
        config = error.cmd[error.cmd.index("--config-file") + 1]
        sys.exit(f"site build failed in {config}: the error above names the page and the fix")
    print(f"site built in {site_dir}")


if __name__ == "__main__":
    main()
