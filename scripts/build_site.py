"""Build the site in every language with `mkdocs build --strict`, from the committed measurements.

English is built into SITE/, the other languages into SITE/<lang>/. English goes first because
its build empties SITE/.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = {"en": "mkdocs.yml", "zh": "mkdocs.zh.yml", "vi": "mkdocs.vi.yml"}


def output_dir(site_dir, language):
    return site_dir if language == "en" else site_dir / language


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
    try:
        build(site_dir)
    except subprocess.CalledProcessError as error:
        sys.exit(f"site build failed: {error}")
    print(f"site built in {site_dir}")


if __name__ == "__main__":
    main()
